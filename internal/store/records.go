package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// ErrDamaged is wrapped by the error of a damaged store: a record whose
// checksum fails (Unseal), a record too short for its fields, or a
// file whose bbolt structure does not hold (checkFile). The error names
// the file (or, on PostgreSQL, the database, the table and the row) and
// the record (and a report's ID); the store never skips a damaged
// record nor computes on it.
var ErrDamaged = errors.New("store damaged")

// ChecksumLen is the length of the checksum Seal appends to a record.
const ChecksumLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Seal returns the stored form of a record: value followed by its
// checksum, CRC-32C (Castagnoli) over the record's place — where, the
// bucket path such as "ledger/<dataset>", and its key (for the appended
// reports and verdicts, the report's ID: reportRecord, idRecord) — and
// value, each length-prefixed, as 4 big-endian bytes. Every record of the store is
// sealed (FormatVersion 5): reports, verdicts, release and pending
// records, the ledger's entries and the verify key. A flipped bit, a
// burst of up to 32 flipped bits, a record moved under another key or
// bucket, or a truncated record fails Unseal; CRC-32C is for storage
// faults, not for an adversary who can write the file (who could as
// well rewrite the ledger). Any store of server records (bbolt here, a
// SQL database elsewhere) keeps the same sealed form.
func Seal(where string, key, value []byte) []byte {
	sum := checksum(where, key, value)
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, len(value)+ChecksumLen), value...), sum)
}

// Unseal returns the value of a record Seal stored under where and key;
// its error wraps ErrDamaged and names the place.
func Unseal(where string, key, rec []byte) ([]byte, error) {
	if len(rec) < ChecksumLen {
		return nil, fmt.Errorf("%w: the record under %s/%x has %d bytes, fewer than its checksum", ErrDamaged, where, key, len(rec))
	}
	value := rec[:len(rec)-ChecksumLen]
	if binary.BigEndian.Uint32(rec[len(value):]) != checksum(where, key, value) {
		return nil, fmt.Errorf("%w: the record under %s/%x fails its checksum", ErrDamaged, where, key)
	}
	return value, nil
}

// checksum is the CRC-32C of Seal.
func checksum(where string, key, value []byte) uint32 {
	h := crc32.New(castagnoli)
	var n [4]byte
	for _, b := range [][]byte{[]byte(where), key, value} {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return h.Sum32()
}

// The appended records (FormatVersion 5: sealed). Reports and verdicts are kept
// per dataset in a bucket of records keyed by a sequence number, the
// bucket's bbolt NextSequence as 8 big-endian bytes, so that the key
// order is the order of appending and a transaction's records fill the
// tail leaves of the B+tree in order: a batch dirties about its bytes
// divided by the page size in leaves, not a leaf per record. Each record
// starts with the report's 16-byte ID:
//
//	reports/<dataset>/<seq>  = reportRecord: Seal(report ID ‖ receipt time (Unix ns, int64 big-endian) ‖ encoded upload)
//	verdicts/<dataset>/<seq> = idRecord: Seal(report ID ‖ the server's verdict record)
const (
	seqLen          = 8
	idLen           = len(payload.ReportID{})
	reportHeaderLen = idLen + 8
)

// seqKey is the key of the record appended as number seq (a new slice:
// bbolt keeps it until the transaction ends).
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, seqLen), seq) }

// reportRecord encodes the sealed record of a report of dataset:
// Seal("reports/<dataset>", its ID, ID ‖ receipt time ‖ upload). The
// seal binds the report's ID, not the sequence number, which a database
// may assign only when it inserts the record.
func reportRecord(dataset string, id payload.ReportID, received time.Time, upload []byte) []byte {
	rec := make([]byte, 0, reportHeaderLen+len(upload)+ChecksumLen)
	rec = append(rec, id[:]...)
	rec = binary.BigEndian.AppendUint64(rec, uint64(received.UnixNano()))
	return Seal(appendedWhere("report", dataset), id[:], append(rec, upload...))
}

// idRecord encodes the sealed record of report id of dataset holding
// rest (a verdict record): Seal("verdicts/<dataset>", its ID, ID ‖ rest).
func idRecord(dataset string, id payload.ReportID, rest []byte) []byte {
	return Seal(appendedWhere("verdict", dataset), id[:], append(append(make([]byte, 0, idLen+len(rest)+ChecksumLen), id[:]...), rest...))
}

// appendedWhere is the place (Seal) of dataset's records of what
// ("report" or "verdict").
func appendedWhere(what, dataset string) string { return what + "s/" + dataset }

// parseRecord splits the record v under key k of dataset (what: "report"
// or "verdict") into its sequence number, report ID and the rest, which
// for a report is at least its receipt time, after checking its
// seal; its errors wrap ErrDamaged and name the record (and, when its ID
// field is readable, the report it claims).
func parseRecord(dataset, what string, k, v []byte) (seq uint64, id payload.ReportID, rest []byte, err error) {
	minLen := idLen
	if what == "report" {
		minLen = reportHeaderLen
	}
	if len(k) != seqLen || len(v) < minLen+ChecksumLen {
		return 0, id, nil, fmt.Errorf("dataset %q: %w: a %s record of %d bytes under the key %x, want an %d-byte key and at least %d bytes", dataset, ErrDamaged, what, len(v), k, seqLen, minLen+ChecksumLen)
	}
	copy(id[:], v)
	seq = binary.BigEndian.Uint64(k)
	value, err := Unseal(appendedWhere(what, dataset), id[:], v)
	if err != nil {
		return seq, id, nil, fmt.Errorf("dataset %q: the %s record %d, of report %v: %w", dataset, what, seq, id, err)
	}
	return seq, id, value[idLen:], nil
}

// parseReport splits the rest of a report record into its receipt time
// and upload.
func parseReport(rest []byte) (received time.Time, upload []byte) {
	return time.Unix(0, int64(binary.BigEndian.Uint64(rest))), rest[8:]
}

// appendRecord appends rec to the records of dataset in bucket and
// returns its sequence number.
func appendRecord(tx *bolt.Tx, bucket []byte, dataset string, rec []byte) (uint64, error) {
	d, err := tx.Bucket(bucket).CreateBucketIfNotExists([]byte(dataset))
	if err != nil {
		return 0, err
	}
	d.FillPercent = 1 // appended in key order: fill each leaf before the next
	seq, err := d.NextSequence()
	if err != nil {
		return 0, err
	}
	return seq, d.Put(seqKey(seq), rec)
}

// index is the store's memory of which reports it holds: per dataset,
// each recorded report's ID and the sequence number of its record (0: not
// recorded; bbolt sequences start at 1). PutReport deduplicates with it,
// and the readers by ID find a report's record through it. It is rebuilt
// from the reports' records when the store opens, and changed only after
// the transaction that appended or deleted the records committed, by the
// writer holding Store.writing: an ID in it is durable.
//
// Memory: one map entry per report, a 16-byte ID and an 8-byte
// sequence number plus the Go map's slack (EXPERIMENTS.md, "Ingest
// throughput", BenchmarkIndexMemory).
type index struct {
	mu   sync.RWMutex
	seqs map[string]map[payload.ReportID]uint64
}

// indexKey names a report of a dataset.
type indexKey struct {
	dataset string
	id      payload.ReportID
}

// seq returns the sequence number of report id of dataset's record, or
// 0 if it is not recorded.
func (x *index) seq(dataset string, id payload.ReportID) uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.seqs[dataset][id]
}

// lookup returns seq for each of ids.
func (x *index) lookup(dataset string, ids []payload.ReportID) []uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	seqs := make([]uint64, len(ids))
	for i, id := range ids {
		seqs[i] = x.seqs[dataset][id]
	}
	return seqs
}

// size returns the number of recorded reports of dataset.
func (x *index) size(dataset string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.seqs[dataset])
}

// add records the reports appended by a committed transaction.
func (x *index) add(added map[indexKey]uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k, seq := range added {
		m := x.seqs[k.dataset]
		if m == nil {
			m = make(map[payload.ReportID]uint64)
			x.seqs[k.dataset] = m
		}
		m[k.id] = seq
	}
}

// remove forgets the reports ids of dataset, deleted by a committed
// transaction.
func (x *index) remove(dataset string, ids []payload.ReportID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		delete(x.seqs[dataset], id)
	}
}

// load rebuilds the index from the reports' records in tx. A report
// recorded twice (which PutReport never writes) is known by its first
// record, the one its acknowledgement followed.
func (x *index) load(tx *bolt.Tx) error {
	x.seqs = make(map[string]map[payload.ReportID]uint64)
	reports := tx.Bucket(reportsBucket)
	return reports.ForEachBucket(func(name []byte) error {
		d := reports.Bucket(name)
		dataset := string(name)
		// The records appended, deleted ones included, bound the size.
		m := make(map[payload.ReportID]uint64, min(d.Sequence(), 1<<24))
		x.seqs[dataset] = m
		return d.ForEach(func(k, v []byte) error {
			seq, id, _, err := parseRecord(dataset, "report", k, v)
			if err != nil {
				return err
			}
			if m[id] == 0 {
				m[id] = seq
			}
			return nil
		})
	})
}
