package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

// Bucket layout: reports/<dataset>/<report ID> = encoded Upload;
// ledger/<dataset> = spent (JSON) and ledger/<dataset>/releases/<release ID>;
// seeds/<dataset>/<release ID> = encoded server.ReleaseRecord (secret).
var (
	reportsBucket  = []byte("reports")
	ledgerBucket   = []byte("ledger")
	releasesBucket = []byte("releases")
	seedsBucket    = []byte("seeds")
	spentKey       = []byte("spent")
)

// Store is a server's durable state in one bbolt file. Every write is
// committed (and fsynced) before the method returns, so a caller that
// acknowledges after it never loses what it acknowledged. It is safe for
// concurrent use; writes are serialised by bbolt.
type Store struct {
	db *bolt.DB
}

// Open opens or creates the store at path (mode 0600). A second process
// opening the same file waits at most a second for its lock and fails.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{reportsBucket, ledgerBucket, seedsBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// PutReport records the upload of report id to dataset. Writing the same
// report again is harmless.
func (s *Store) PutReport(dataset string, id protocol.ReportID, upload []byte) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(reportsBucket).CreateBucketIfNotExists([]byte(dataset))
		if err != nil {
			return err
		}
		return b.Put(id[:], upload)
	})
	if err != nil {
		return fmt.Errorf("store: recording report %v of dataset %q: %w", id, dataset, err)
	}
	return nil
}

// Reports calls fn with every recorded upload of dataset, in report ID
// order. The upload slice is valid only during the call.
func (s *Store) Reports(dataset string, fn func(id protocol.ReportID, upload []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(reportsBucket).Bucket([]byte(dataset))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var id protocol.ReportID
			if len(k) != len(id) {
				return fmt.Errorf("store: dataset %q holds a report key of %d bytes, want %d", dataset, len(k), len(id))
			}
			copy(id[:], k)
			return fn(id, v)
		})
	})
}

// NumReports returns the number of recorded reports of dataset.
func (s *Store) NumReports(dataset string) (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(reportsBucket).Bucket([]byte(dataset)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// Charge implements server.Ledger: in one transaction it applies
// server.Admit to the dataset's spending and whether the release is
// recorded, then records both. Charging a recorded release again is a
// no-op.
func (s *Store) Charge(dataset string, release protocol.ReleaseID, cost, total server.Budget) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		d, err := tx.Bucket(ledgerBucket).CreateBucketIfNotExists([]byte(dataset))
		if err != nil {
			return err
		}
		rels, err := d.CreateBucketIfNotExists(releasesBucket)
		if err != nil {
			return err
		}
		spent, err := readSpent(d, dataset)
		if err != nil {
			return err
		}
		charged := rels.Get(release[:]) != nil
		if err := server.Admit(charged, spent, cost, total); err != nil {
			return fmt.Errorf("dataset %q: %w", dataset, err)
		}
		if charged {
			return nil
		}
		b, err := json.Marshal(spent.Add(cost))
		if err != nil {
			return err
		}
		if err := d.Put(spentKey, b); err != nil {
			return err
		}
		return rels.Put(release[:], []byte(time.Now().UTC().Format(time.RFC3339)))
	})
}

// Spent implements server.Ledger.
func (s *Store) Spent(dataset string) (server.Budget, error) {
	var spent server.Budget
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		var err error
		spent, err = readSpent(d, dataset)
		return err
	})
	return spent, err
}

// Charged implements server.Ledger.
func (s *Store) Charged(dataset string, release protocol.ReleaseID) (bool, error) {
	var charged bool
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		if rels := d.Bucket(releasesBucket); rels != nil {
			charged = rels.Get(release[:]) != nil
		}
		return nil
	})
	return charged, err
}

func readSpent(d *bolt.Bucket, dataset string) (server.Budget, error) {
	var spent server.Budget
	b := d.Get(spentKey)
	if b == nil {
		return spent, nil
	}
	if err := json.Unmarshal(b, &spent); err != nil {
		return spent, fmt.Errorf("store: ledger of dataset %q: %w", dataset, err)
	}
	if err := spent.Valid(); err != nil {
		return spent, fmt.Errorf("store: ledger of dataset %q: spent %w", dataset, err)
	}
	return spent, nil
}

// SaveRelease implements server.ReleaseStore: the record, with the
// server's secret seed of the release, is committed before it returns.
func (s *Store) SaveRelease(r *server.ReleaseRecord) error {
	b, err := r.MarshalBinary()
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		d, err := tx.Bucket(seedsBucket).CreateBucketIfNotExists([]byte(r.Dataset))
		if err != nil {
			return err
		}
		return d.Put(r.Release[:], b)
	})
	if err != nil {
		return fmt.Errorf("store: recording release %v of dataset %q: %w", r.Release, r.Dataset, err)
	}
	return nil
}

// LoadReleases implements server.ReleaseStore, in release ID order.
func (s *Store) LoadReleases(dataset string, fn func(*server.ReleaseRecord) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(seedsBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		return d.ForEach(func(k, v []byte) error {
			r, err := server.ParseReleaseRecord(v)
			if err != nil {
				return fmt.Errorf("store: dataset %q: %w", dataset, err)
			}
			if string(k) != string(r.Release[:]) || r.Dataset != dataset {
				return fmt.Errorf("store: dataset %q: the record under key %x is release %v of dataset %q", dataset, k, r.Release, r.Dataset)
			}
			return fn(r)
		})
	})
}

var (
	_ server.Ledger       = (*Store)(nil)
	_ server.ReleaseStore = (*Store)(nil)
)
