package store

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// quarantineBucket holds, per dataset, the reports set aside
// (quarantine/<dataset>/<report ID> = Seal(the time, RFC 3339)).
var quarantineBucket = []byte("quarantine")

// ErrQuarantined is wrapped by the refusal of PutReport for a report
// set aside by Quarantine: it leaves every future release.
var ErrQuarantined = errors.New("report quarantined")

// Quarantine sets aside the reports ids of dataset in the store file at
// path, which no server may hold open: it deletes every report and
// verdict record that names one of them — whether its seal holds or not,
// so that a damaged record Open refused (ErrDamaged, naming its report)
// goes — and records each ID as quarantined, so that the store refuses
// it if uploaded again (ErrQuarantined). A restarted server then knows
// nothing of those reports: they leave every future release, and a
// release created over one of them is refused rather than answered over
// another set (server.ErrReportSetChanged). Run at both servers with the
// same IDs, both hold the same report set again. It returns the number
// of records deleted. The file's bbolt structure must be sound
// (checkFile); a file damaged there is restored from a backup.
func Quarantine(path, dataset string, ids []payload.ReportID) (int, error) {
	if err := checkMode(path); err != nil {
		return 0, err
	}
	f, err := lockFile(path, time.Second)
	switch {
	case errors.Is(err, errLocked):
		return 0, lockedError(path)
	case err != nil:
		return 0, fmt.Errorf("store: %s: %w", path, err)
	case f == nil:
		return 0, fmt.Errorf("store: %s: no such store file", path)
	}
	err = checkFile(f)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w; restore the file from a backup", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("store: %s: %w", path, err)
	}
	defer db.Close()
	set := make(map[payload.ReportID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	deleted := 0
	err = db.Update(func(tx *bolt.Tx) error {
		if err := initBuckets(tx); err != nil {
			return err
		}
		for _, bucket := range [][]byte{reportsBucket, verdictsBucket} {
			n, err := deleteNamed(tx.Bucket(bucket).Bucket([]byte(dataset)), set)
			if err != nil {
				return err
			}
			deleted += n
		}
		q, err := tx.CreateBucketIfNotExists(quarantineBucket)
		if err == nil {
			q, err = q.CreateBucketIfNotExists([]byte(dataset))
		}
		if err != nil {
			return err
		}
		at := []byte(time.Now().UTC().Format(time.RFC3339))
		for id := range set {
			if err := q.Put(id[:], Seal(quarantineWhere(dataset), id[:], at)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: %s: quarantining %d reports of dataset %q: %w", path, len(ids), dataset, err)
	}
	return deleted, nil
}

// quarantineWhere is the place (Seal) of a dataset's quarantined IDs.
func quarantineWhere(dataset string) string { return string(quarantineBucket) + "/" + dataset }

// deleteNamed deletes the records of d (nil: none) whose report ID, their
// first bytes, is in set.
func deleteNamed(d *bolt.Bucket, set map[payload.ReportID]bool) (int, error) {
	if d == nil {
		return 0, nil
	}
	var keys [][]byte
	err := d.ForEach(func(k, v []byte) error {
		var id payload.ReportID
		if len(v) >= idLen {
			copy(id[:], v)
			if set[id] {
				keys = append(keys, k)
			}
		}
		return nil
	})
	for _, k := range keys {
		if err == nil {
			err = d.Delete(k)
		}
	}
	return len(keys), err
}

// loadQuarantine reads the quarantined IDs of every dataset.
func loadQuarantine(tx *bolt.Tx) (map[string]map[payload.ReportID]bool, error) {
	out := make(map[string]map[payload.ReportID]bool)
	q := tx.Bucket(quarantineBucket)
	if q == nil {
		return out, nil
	}
	err := q.ForEachBucket(func(name []byte) error {
		m := make(map[payload.ReportID]bool)
		out[string(name)] = m
		return q.Bucket(name).ForEach(func(k, _ []byte) error {
			var id payload.ReportID
			if len(k) != idLen {
				return fmt.Errorf("%w: a quarantined report under the key %x", ErrDamaged, k)
			}
			copy(id[:], k)
			m[id] = true
			return nil
		})
	})
	return out, err
}
