package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Bucket layout: reports/<dataset>/<seq> = a report's record (records.go);
// ledger/<dataset> = spent and total (JSON) and ledger/<dataset>/releases/<release ID>;
// seeds/<dataset>/<release ID> = the server's encoded release record (secret);
// verdicts and verifykey: see verdicts.go.
var (
	reportsBucket  = []byte("reports")
	ledgerBucket   = []byte("ledger")
	releasesBucket = []byte("releases")
	seedsBucket    = []byte("seeds")
	metaBucket     = []byte("meta")
	spentKey       = []byte("spent")
	totalKey       = []byte("total")
	formatKey      = []byte("format")
)

// FormatVersion is the version of the store's layout and of the records
// in it (the server's release records, the ledger entries). It is written into a
// new store and checked on every open: a store written under another
// version is refused (ErrFormat), never read with other rules — a
// release whose seed derived other noise could be averaged over two
// draws. Changing the layout or any record encoding is a breaking change
// that bumps it.
// Version 2: release records of version 3 (protocol version 4), the
// leader's pending records, and the total budget of each dataset's
// ledger (ledger/<dataset>/total).
// Version 3: the verification verdicts of additive datasets and their
// verify key (verdicts.go), and uploads of protocol version 7.
// Version 4: reports and verdicts appended under sequence numbers, each
// record holding its report ID, the receipt time inside the report's
// record (records.go), instead of keyed by report ID, and uploads of
// protocol version 8.
// Version 5: every record sealed with a checksum of its place and value
// (Seal), checked on every read (ErrDamaged); uploads of protocol
// version 9.
const FormatVersion = 5

// ErrFormat is wrapped by the error of Open for a store written under
// another FormatVersion (or holding no version at all).
var ErrFormat = errors.New("store format not supported")

// ErrPermissions is wrapped by the error of Open for a store file that
// group or others may read or write: it holds secret release seeds.
var ErrPermissions = errors.New("store file readable by others")

// ErrLocked is wrapped by the error of Open for a store file another
// process holds open.
var ErrLocked = errors.New("store file in use by another process")

// Store is a server's durable state in one bbolt file. Every write is
// committed (and fsynced) before the method returns, so a caller that
// acknowledges after it never loses what it acknowledged. It is safe for
// concurrent use; writes are serialised by bbolt, and concurrent
// PutReport and SaveVerdicts calls share a transaction (group commit).
type Store struct {
	path  string // the file, named in errors
	db    *bolt.DB
	c     *committer
	index index
	// writing serialises the writers of reports (the committer,
	// DeleteReports) with the index they change.
	writing sync.Mutex
	// quarantined holds, per dataset, the reports set aside
	// (Quarantine), read at Open and never changed while open.
	quarantined map[string]map[payload.ReportID]bool
}

// Quarantined reports whether report id of dataset was set aside by
// Quarantine: an upload of it is to be refused before the server
// accepts it (PutReport refuses it too, ErrQuarantined).
func (s *Store) Quarantined(dataset string, id payload.ReportID) bool {
	return s.quarantined[dataset][id]
}

// Open opens or creates the store at path (mode 0600). An existing file
// must not be accessible to group or others (ErrPermissions), must be a
// sound bbolt file (checkFile: else ErrDamaged, naming it) and must hold
// this FormatVersion (ErrFormat); its report records are read, and
// their seals checked, to build the index (a damaged one: ErrDamaged,
// naming the report). A second process opening the same file waits at
// most a second for its lock and fails (ErrLocked).
func Open(path string) (*Store, error) {
	if err := checkMode(path); err != nil {
		return nil, err
	}
	f, err := lockFile(path, time.Second)
	if errors.Is(err, errLocked) {
		return nil, lockedError(path)
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if f != nil {
		err = checkFile(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w; restore the file from a backup", path, err)
		}
	}
	return openChecked(path)
}

// errLocked is lockFile's error for a file another process holds.
var errLocked = errors.New("locked")

func lockedError(path string) error {
	return fmt.Errorf("store: %s: %w", path, ErrLocked)
}

// openChecked opens the file checkFile accepted. Should bbolt still
// panic or fault on it (a damage checkFile does not see), the panic is
// recovered into ErrDamaged naming the file.
func openChecked(path string) (s *Store, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var db *bolt.DB
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				closeQuietly(db)
			}
			s, err = nil, fmt.Errorf("store: %s: %w: bbolt: %v; restore the file from a backup", path, ErrDamaged, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, lockedError(path)
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	s = &Store{path: path, db: db}
	err = db.View(initBuckets)
	if errors.Is(err, errInit) {
		err = db.Update(initBuckets)
	}
	if err != nil {
		db.Close()
		return nil, s.named(err)
	}
	if err := db.View(s.index.load); err != nil {
		db.Close()
		return nil, s.named(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if err := checkRecords(tx); err != nil {
			return err
		}
		s.quarantined, err = loadQuarantine(tx)
		return err
	})
	if err != nil {
		db.Close()
		return nil, s.named(err)
	}
	s.startCommitter()
	return s, nil
}

// closeQuietly closes db after a panic in it, ignoring a further one.
func closeQuietly(db *bolt.DB) {
	defer func() { _ = recover() }()
	db.Close()
}

// checkMode refuses an existing store file with any group or other
// permission bit, as deploy refuses key files.
func checkMode(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("store: %s has mode %v: %w: it holds secret release seeds; make it readable by the server only (chmod 600 %s)", path, perm, ErrPermissions, path)
	}
	return nil
}

// initBuckets creates the buckets of a new store and writes its format
// version, or checks the version of an existing one.
func initBuckets(tx *bolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		if tx.Bucket(reportsBucket) != nil {
			return fmt.Errorf("%w: the file has no format version (written before version %d); start the server on a new store file", ErrFormat, FormatVersion)
		}
		if !tx.Writable() {
			return errInit
		}
		var err error
		if meta, err = tx.CreateBucket(metaBucket); err != nil {
			return err
		}
		if err := meta.Put(formatKey, Seal(string(metaBucket), formatKey, []byte{FormatVersion})); err != nil {
			return err
		}
	}
	v := meta.Get(formatKey)
	switch len(v) {
	case 0:
		return fmt.Errorf("%w: the meta bucket holds no format version", ErrDamaged)
	case 1 + ChecksumLen: // sealed: format 5 on
		var err error
		if v, err = Unseal(string(metaBucket), formatKey, v); err != nil {
			return fmt.Errorf("the format version: %w", err)
		}
	}
	if len(v) != 1 || v[0] != FormatVersion {
		return fmt.Errorf("%w: the file is format %v, this fedecdf reads format %d", ErrFormat, v, FormatVersion)
	}
	for _, b := range [][]byte{reportsBucket, ledgerBucket, seedsBucket, verdictsBucket, verifyKeyBucket} {
		if tx.Bucket(b) != nil {
			continue
		}
		if !tx.Writable() {
			return errInit
		}
		if _, err := tx.CreateBucket(b); err != nil {
			return err
		}
	}
	return nil
}

// errInit is initBuckets' error in a read transaction on a store that
// lacks a bucket: Open then runs it in a write transaction.
var errInit = errors.New("buckets to create")

// Close commits the reports already queued (their PutReport calls
// return), refuses further ones (ErrClosed) and closes the file.
func (s *Store) Close() error {
	s.stopCommitter()
	return s.db.Close()
}

// Reports calls fn with every recorded upload of dataset, in the order
// they were first recorded. The upload slice is valid only during the
// call.
func (s *Store) Reports(dataset string, fn func(id payload.ReportID, upload []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(reportsBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		return d.ForEach(func(k, v []byte) error {
			seq, id, rest, err := parseRecord(dataset, "report", k, v)
			switch {
			case err != nil:
				return s.named(err)
			case s.index.seq(dataset, id) != seq:
				return nil // a second record of the report, or one deleted since
			}
			_, upload := parseReport(rest)
			return fn(id, bytes.Clone(upload)) // v is valid only in the transaction; fn's error as it is
		})
	})
}

// records calls fn with the record of each of the reports ids of dataset
// (the part after the ID), in the order given, in one read transaction;
// a report not recorded is an error. The slice is valid only in the
// transaction.
func (s *Store) records(dataset string, ids []payload.ReportID, fn func(i int, rest []byte) error) error {
	seqs := s.index.lookup(dataset, ids)
	return s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(reportsBucket).Bucket([]byte(dataset))
		for i, id := range ids {
			var v []byte
			if d != nil && seqs[i] != 0 {
				v = d.Get(seqKey(seqs[i]))
			}
			if v == nil {
				return fmt.Errorf("report %v of dataset %q is not recorded", id, dataset)
			}
			_, got, rest, err := parseRecord(dataset, "report", seqKey(seqs[i]), v)
			if err != nil {
				return s.named(err)
			}
			if got != id {
				return fmt.Errorf("dataset %q: the record of report %v holds report %v: the store file is damaged", dataset, id, got)
			}
			if err := fn(i, rest); err != nil {
				return err
			}
		}
		return nil
	})
}

// Uploads calls fn with the recorded upload of each of the reports ids of
// dataset, in the order given, in one read transaction; a report not
// recorded is an error. The upload slice is valid only during the call.
// It implements server.ReportStore.
func (s *Store) Uploads(dataset string, ids []payload.ReportID, fn func(id payload.ReportID, upload []byte) error) error {
	var fnErr error
	err := s.records(dataset, ids, func(i int, rest []byte) error {
		_, upload := parseReport(rest)
		fnErr = fn(ids[i], bytes.Clone(upload))
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("store: %w", err)
	}
	return err
}

// ReceivedAt returns, for each of ids, when the report was first
// recorded, or the zero time if it is not recorded.
func (s *Store) ReceivedAt(dataset string, ids []payload.ReportID) ([]time.Time, error) {
	times := make([]time.Time, len(ids))
	var held []payload.ReportID
	var at []int
	for i, seq := range s.index.lookup(dataset, ids) {
		if seq != 0 {
			held, at = append(held, ids[i]), append(at, i)
		}
	}
	err := s.records(dataset, held, func(i int, rest []byte) error {
		times[at[i]], _ = parseReport(rest)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return times, nil
}

// DeleteReports removes the reports ids of dataset in one transaction,
// and returns how many it held.
func (s *Store) DeleteReports(dataset string, ids []payload.ReportID) (int, error) {
	s.writing.Lock()
	defer s.writing.Unlock()
	var deleted []payload.ReportID
	seqs := s.index.lookup(dataset, ids)
	err := s.db.Update(func(tx *bolt.Tx) error {
		d := tx.Bucket(reportsBucket).Bucket([]byte(dataset))
		gone := make(map[uint64]bool, len(seqs))
		for i, seq := range seqs {
			if seq == 0 || gone[seq] { // not held, or named twice
				continue
			}
			gone[seq] = true
			deleted = append(deleted, ids[i])
			if err := d.Delete(seqKey(seq)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: deleting reports of dataset %q: %w", dataset, err)
	}
	s.index.remove(dataset, deleted)
	return len(deleted), nil
}

// NumReports returns the number of recorded reports of dataset.
func (s *Store) NumReports(dataset string) (int, error) {
	return s.index.size(dataset), nil
}

// Charge implements ledger.Ledger: in one transaction it applies
// ledger.Admit to the dataset's spending and whether the release is
// recorded, then records both. Charging a recorded release again is a
// no-op.
func (s *Store) Charge(dataset string, release payload.ReleaseID, cost, total ledger.Budget) error {
	if err := s.db.Update(func(tx *bolt.Tx) error { return charge(tx, dataset, release, cost, total) }); err != nil {
		return s.named(err)
	}
	return nil
}

// charge is Charge within the transaction tx, without the package prefix.
func charge(tx *bolt.Tx, dataset string, release payload.ReleaseID, cost, total ledger.Budget) error {
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
	charged, err := isCharged(rels, dataset, release)
	if err != nil {
		return err
	}
	if err := ledger.Admit(charged, spent, cost, total); err != nil {
		return fmt.Errorf("dataset %q: %w", dataset, err)
	}
	if charged {
		return nil
	}
	b, err := json.Marshal(spent.Add(cost))
	if err != nil {
		return err
	}
	if err := d.Put(spentKey, Seal(ledgerWhere(dataset), spentKey, b)); err != nil {
		return err
	}
	return rels.Put(release[:], Seal(chargesWhere(dataset), release[:], []byte(time.Now().UTC().Format(time.RFC3339))))
}

// ledgerWhere and chargesWhere are the places (Seal) of a dataset's
// ledger entries and of its charged releases.
func ledgerWhere(dataset string) string  { return "ledger/" + dataset }
func chargesWhere(dataset string) string { return "ledger/" + dataset + "/releases" }

// isCharged reports whether the charges rels record release, checking
// the record's seal.
func isCharged(rels *bolt.Bucket, dataset string, release payload.ReleaseID) (bool, error) {
	v := rels.Get(release[:])
	if v == nil {
		return false, nil
	}
	if _, err := Unseal(chargesWhere(dataset), release[:], v); err != nil {
		return false, fmt.Errorf("the charge of release %v of dataset %q: %w", release, dataset, err)
	}
	return true, nil
}

// Spent implements ledger.Ledger.
func (s *Store) Spent(dataset string) (ledger.Budget, error) {
	var spent ledger.Budget
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		var err error
		spent, err = readSpent(d, dataset)
		return err
	})
	if err != nil {
		return ledger.Budget{}, s.named(err)
	}
	return spent, nil
}

// Charged implements ledger.Ledger.
func (s *Store) Charged(dataset string, release payload.ReleaseID) (bool, error) {
	var charged bool
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		var err error
		if rels := d.Bucket(releasesBucket); rels != nil {
			charged, err = isCharged(rels, dataset, release)
		}
		return err
	})
	if err != nil {
		return false, s.named(err)
	}
	return charged, nil
}

// Releases implements ledger.Ledger: the number of releases charged on
// dataset's ledger.
func (s *Store) Releases(dataset string) (uint64, error) {
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		if rels := d.Bucket(releasesBucket); rels != nil {
			n = uint64(rels.Stats().KeyN)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	return n, nil
}

func readSpent(d *bolt.Bucket, dataset string) (ledger.Budget, error) {
	return parseSpent(d.Get(spentKey), dataset)
}

// parseSpent decodes the spending recorded for dataset (nil: none).
func parseSpent(b []byte, dataset string) (ledger.Budget, error) {
	var spent ledger.Budget
	if b == nil {
		return spent, nil
	}
	b, err := Unseal(ledgerWhere(dataset), spentKey, b)
	if err != nil {
		return spent, fmt.Errorf("ledger of dataset %q: spent: %w", dataset, err)
	}
	if err := json.Unmarshal(b, &spent); err != nil {
		return spent, fmt.Errorf("ledger of dataset %q: %w", dataset, err)
	}
	if err := spent.Valid(); err != nil {
		return spent, fmt.Errorf("ledger of dataset %q: spent: %w", dataset, err)
	}
	return spent, nil
}

// Total returns the total budget the ledger of dataset is kept under, as
// last recorded by SetTotal, and whether one is recorded.
func (s *Store) Total(dataset string) (ledger.Budget, bool, error) {
	var total ledger.Budget
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(ledgerBucket).Bucket([]byte(dataset))
		if d == nil || d.Get(totalKey) == nil {
			return nil
		}
		found = true
		b, err := Unseal(ledgerWhere(dataset), totalKey, d.Get(totalKey))
		if err != nil {
			return fmt.Errorf("ledger of dataset %q: total: %w", dataset, err)
		}
		if err := json.Unmarshal(b, &total); err != nil {
			return fmt.Errorf("ledger of dataset %q: total: %w", dataset, err)
		}
		return total.Valid()
	})
	if err != nil {
		return ledger.Budget{}, false, s.named(err)
	}
	return total, found, nil
}

// SetTotal records the total budget the ledger of dataset is kept under
// (a server compares it with its manifest's at start-up).
func (s *Store) SetTotal(dataset string, total ledger.Budget) error {
	if err := total.Valid(); err != nil {
		return fmt.Errorf("store: dataset %q: total: %w", dataset, err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		d, err := tx.Bucket(ledgerBucket).CreateBucketIfNotExists([]byte(dataset))
		if err != nil {
			return err
		}
		b, err := json.Marshal(total)
		if err != nil {
			return err
		}
		return d.Put(totalKey, Seal(ledgerWhere(dataset), totalKey, b))
	})
	if err != nil {
		return fmt.Errorf("store: recording the total budget of dataset %q: %w", dataset, err)
	}
	return nil
}

// SaveRelease implements server.ReleaseStore: the encoded record, with
// the server's secret seed of the release, is committed before it
// returns.
func (s *Store) SaveRelease(dataset string, release payload.ReleaseID, record []byte) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		d, err := tx.Bucket(seedsBucket).CreateBucketIfNotExists([]byte(dataset))
		if err != nil {
			return err
		}
		return d.Put(release[:], Seal(seedsWhere(dataset), release[:], record))
	})
	if err != nil {
		return fmt.Errorf("store: recording release %v of dataset %q: %w", release, dataset, err)
	}
	return nil
}

// DeleteRelease implements server.ReleaseStore: the record is gone,
// durably, when it returns nil.
func (s *Store) DeleteRelease(dataset string, release payload.ReleaseID) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if d := tx.Bucket(seedsBucket).Bucket([]byte(dataset)); d != nil {
			return d.Delete(release[:])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: deleting release %v of dataset %q: %w", release, dataset, err)
	}
	return nil
}

// seedsWhere is the place (Seal) of a dataset's release records.
func seedsWhere(dataset string) string { return "seeds/" + dataset }

// LoadReleases implements server.ReleaseStore, in release ID order; a
// record whose seal fails is an error (ErrDamaged).
func (s *Store) LoadReleases(dataset string, fn func(release payload.ReleaseID, record []byte) error) error {
	var fnErr error
	err := s.db.View(func(tx *bolt.Tx) error {
		d := tx.Bucket(seedsBucket).Bucket([]byte(dataset))
		if d == nil {
			return nil
		}
		return d.ForEach(func(k, v []byte) error {
			var id payload.ReleaseID
			if len(k) != len(id) {
				return fmt.Errorf("dataset %q: %w: a release record under the key %x, not a release ID", dataset, ErrDamaged, k)
			}
			copy(id[:], k)
			rec, err := Unseal(seedsWhere(dataset), k, v)
			if err != nil {
				return fmt.Errorf("dataset %q: the record of release %v: %w", dataset, id, err)
			}
			fnErr = fn(id, bytes.Clone(rec)) // v is valid only in the transaction
			return fnErr
		})
	})
	if err != nil && err != fnErr {
		return s.named(err)
	}
	return err
}

// named prefixes err with the package and the file.
func (s *Store) named(err error) error { return fmt.Errorf("store: %s: %w", s.path, err) }

var _ ledger.Ledger = (*Store)(nil)
