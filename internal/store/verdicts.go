package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// Buckets of the verified backends: verdicts/<dataset>/<seq> = a
// report's ID and the server's encoded verdict record, appended
// (records.go); verifykey/<dataset> = the verify key record
// (verifyKeyVersion, then the key).
var (
	verdictsBucket  = []byte("verdicts")
	verifyKeyBucket = []byte("verifykey")
)

// verifyKeyVersion is the first byte of a stored verify key record.
const verifyKeyVersion = 1

// ErrVerifyKeyChanged is wrapped by the refusal of CheckVerifyKey when
// the store's dataset was verified under another key.
var ErrVerifyKeyChanged = errors.New("verification key changed")

// SaveVerdicts implements server.VerdictStore: the records are appended
// and committed before it returns, in the transaction of the reports and
// verdicts written at the same time (group commit, commit.go). A record
// replaces the earlier ones of its report when loaded.
func (s *Store) SaveVerdicts(dataset string, records map[payload.ReportID][]byte) error {
	if len(records) == 0 {
		return nil
	}
	if err := s.enqueue(&write{dataset: dataset, verdicts: records}); err != nil {
		return fmt.Errorf("store: recording %d verdicts of dataset %q: %w", len(records), dataset, err)
	}
	return nil
}

// LoadVerdicts implements server.VerdictStore: fn is called once per
// report, with its last record, in the order of those records.
func (s *Store) LoadVerdicts(dataset string, fn func(id payload.ReportID, record []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(verdictsBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		last := make(map[payload.ReportID]uint64)
		err := d.ForEach(func(k, v []byte) error {
			seq, id, _, err := parseRecord(dataset, "verdict", k, v)
			last[id] = seq
			return err
		})
		if err != nil {
			return s.named(err)
		}
		return d.ForEach(func(k, v []byte) error {
			seq, id, rec, _ := parseRecord(dataset, "verdict", k, v)
			if last[id] != seq {
				return nil // replaced by a later record
			}
			return fn(id, bytes.Clone(rec)) // rec is valid only in the transaction
		})
	})
}

// CheckVerifyKey records key as the verification key of dataset's
// reports if the store has none yet or holds no verdict of dataset
// (nothing was decided under the old one), and otherwise refuses
// another key than the one recorded (ErrVerifyKeyChanged): the verdicts
// in the store, and the reports its peer holds, were verified under it.
// The key is a secret shared by the two servers, kept here like the
// release seeds.
func (s *Store) CheckVerifyKey(dataset string, key []byte) error {
	want := append([]byte{verifyKeyVersion}, key...)
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(verifyKeyBucket)
		old := b.Get([]byte(dataset))
		if old != nil {
			var err error
			if old, err = Unseal(string(verifyKeyBucket), []byte(dataset), old); err != nil {
				return s.named(fmt.Errorf("dataset %q: the verify key record: %w", dataset, err))
			}
		}
		if old == nil || (!bytes.Equal(old, want) && !hasVerdicts(tx, dataset)) {
			return b.Put([]byte(dataset), Seal(string(verifyKeyBucket), []byte(dataset), want))
		}
		return compareVerifyKey(dataset, old, want)
	})
}

// hasVerdicts reports whether the store holds a verdict of dataset.
func hasVerdicts(tx *bolt.Tx, dataset string) bool {
	d := tx.Bucket(verdictsBucket).Bucket([]byte(dataset))
	if d == nil {
		return false
	}
	k, _ := d.Cursor().First()
	return k != nil
}

// compareVerifyKey refuses the recorded verify key record old of
// dataset if it is not want.
func compareVerifyKey(dataset string, old, want []byte) error {
	switch {
	case len(old) == 0 || old[0] != verifyKeyVersion:
		return fmt.Errorf("store: dataset %q: verify key record of version %v, this fedecdf reads version %d; start on a new store", dataset, old[:min(len(old), 1)], verifyKeyVersion)
	case !bytes.Equal(old, want):
		return fmt.Errorf("store: dataset %q: %w: the key derived now is not the one its verdicts were reached under (did a server's key file change?); start both servers with the key files the store was started with, or both on new stores", dataset, ErrVerifyKeyChanged)
	}
	return nil
}
