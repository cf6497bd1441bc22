package client

import (
	"bufio"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// RowKeySize is the size of the secret that keys a party's row reports
// (RowReportID).
const RowKeySize = 32

// The versions of the row identity: the MAC labels of a row's report ID
// and keys, the first line of a row key file and of its uploaded-rows
// side file. Version 1 keyed a row by its position in the file; version
// 2 by its content and occurrence number. Changing any of them changes
// every row's ID, so an old file is detected (ErrOldRowKey) rather than
// every row stored twice.
const (
	rowIDLabel     = "fedecdf report id v2"
	rowKeysLabel   = "fedecdf report keys v2"
	rowKeyHeader   = "fedecdf row key v2"
	uploadedHeader = "fedecdf uploaded rows v2"
)

// ErrOldRowKey is returned for a row key file, or its uploaded-rows side
// file, written by a fedecdf whose report IDs depended on the rows'
// positions: its IDs cannot be recomputed, so reusing it would store
// every row again.
var ErrOldRowKey = errors.New("deploy: row key of an older version")

// RowReportID returns the report ID of the occ-th (0-based) row equal
// to x in a party's file: the first 16 bytes of HMAC-SHA256 under the
// party's secret key of a version label, the dataset, occ and the row's
// values. It does not depend on the row's position, so a rerun of the
// same rows in any order with the same key gives the same IDs and the
// servers drop the rows an earlier run stored; without the key the ID
// says nothing about the row.
func RowReportID(key []byte, dataset string, occ int, x party.Instance) payload.ReportID {
	var id payload.ReportID
	copy(id[:], rowMAC(key, rowIDLabel, dataset, occ, x))
	return id
}

// RowOccurrences returns, for each row, how many earlier rows are equal
// to it (same score, label and probability, bit for bit): the occ of
// RowReportID.
func RowOccurrences(inst []party.Instance) []int {
	type rowBits struct {
		score, label, prob uint64
		hasProb            bool
	}
	seen := make(map[rowBits]int, len(inst))
	occ := make([]int, len(inst))
	for k, x := range inst {
		b := rowBits{math.Float64bits(x.Score), uint64(x.Label), math.Float64bits(x.Probability), x.HasProbability}
		occ[k] = seen[b]
		seen[b]++
	}
	return occ
}

// RowReportIDs returns the report ID of every row of a party's file
// (RowReportID with RowOccurrences).
func RowReportIDs(key []byte, dataset string, inst []party.Instance) []payload.ReportID {
	occ := RowOccurrences(inst)
	ids := make([]payload.ReportID, len(inst))
	for k, x := range inst {
		ids[k] = RowReportID(key, dataset, occ[k], x)
	}
	return ids
}

// rowMAC is HMAC-SHA256 under key of a domain label, the dataset, the
// row's occurrence number and its values, each length-prefixed or
// fixed-size.
func rowMAC(key []byte, label, dataset string, occ int, x party.Instance) []byte {
	mac := hmac.New(sha256.New, key)
	var b []byte
	for _, s := range []string{label, dataset} {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(occ))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(x.Score))
	b = binary.BigEndian.AppendUint64(b, uint64(x.Label))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(x.Probability))
	if x.HasProbability {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	mac.Write(b)
	return mac.Sum(nil)
}

// LoadRowKey reads the party's row key (RowReportID) from path, a file
// of mode 0600 holding a version line and the key in hex, creating it
// with fresh random bytes when it does not exist (created is then true).
// Keep the file to rerun a file safely: a new key gives every row a new
// ID, and the servers would store it twice. A key file of an older
// version gives ErrOldRowKey.
func LoadRowKey(path string) (key []byte, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, RowKeySize)
		if _, err := crand.Read(key); err != nil {
			return nil, false, fmt.Errorf("drawing a row key from crypto/rand: %w", err)
		}
		if err := writeExclusive(path, fmt.Sprintf("%s\n%x\n", rowKeyHeader, key)); err != nil {
			return nil, false, fmt.Errorf("writing row key file %s: %w", path, err)
		}
		return key, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("row key file: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return nil, false, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 {
		if k, err := hex.DecodeString(strings.TrimSpace(lines[0])); err == nil && len(k) == RowKeySize {
			return nil, false, fmt.Errorf("%w: %s was made by a fedecdf whose report IDs depended on the rows' positions; "+
				"this version keys a row by its content, so every row uploaded with it would be stored again. "+
				"Finish an interrupted upload with the fedecdf that began it; move the file away only to upload rows never uploaded before", ErrOldRowKey, path)
		}
	}
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != rowKeyHeader {
		return nil, false, fmt.Errorf("row key file %s does not hold the line %q and %d hex-encoded bytes; remove it only if no row was ever submitted with it", path, rowKeyHeader, RowKeySize)
	}
	key, err = hex.DecodeString(strings.TrimSpace(lines[1]))
	if err != nil || len(key) != RowKeySize {
		return nil, false, fmt.Errorf("row key file %s does not hold %d hex-encoded bytes; remove it only if no row was ever submitted with it", path, RowKeySize)
	}
	return key, false, nil
}

// checkPrivate refuses a secret file readable by group or others.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("row key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("row key file %s has mode %v: it must not be readable by group or others (chmod 600)", path, fi.Mode().Perm())
	}
	return nil
}

// writeExclusive creates path (mode 0600, failing if it exists) with
// body, synced.
func writeExclusive(path, body string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(body)
	return errors.Join(werr, f.Sync(), f.Close())
}

// UploadedRowsPath is the side file of a row key that remembers the
// report IDs of the rows both servers stored (ReadUploadedRows).
func UploadedRowsPath(keyPath string) string { return keyPath + ".uploaded" }

// ReadUploadedRows reads the report IDs a side file of a row key lists
// (none when it does not exist): a version line, then one ID in hex a
// line. A side file of another version gives ErrOldRowKey.
func ReadUploadedRows(path string) (map[payload.ReportID]bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[payload.ReportID]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("uploaded rows file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != uploadedHeader {
		return nil, fmt.Errorf("%w: uploaded rows file %s does not begin with %q; move it away to stop reporting edited rows", ErrOldRowKey, path, uploadedHeader)
	}
	ids := map[payload.ReportID]bool{}
	for line := 2; sc.Scan(); line++ {
		var id payload.ReportID
		b, err := hex.DecodeString(sc.Text())
		if err != nil || len(b) != len(id) {
			return nil, fmt.Errorf("uploaded rows file %s:%d: not a report ID in hex; move the file away to stop reporting edited rows", path, line)
		}
		copy(id[:], b)
		ids[id] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("uploaded rows file %s: %w", path, err)
	}
	return ids, nil
}

// WriteUploadedRows replaces the side file at path with ids (sorted),
// through a temporary file renamed over it, so a crash leaves the old
// or the new list.
func WriteUploadedRows(path string, ids map[payload.ReportID]bool) error {
	lines := make([]string, 0, len(ids))
	for id := range ids {
		lines = append(lines, hex.EncodeToString(id[:]))
	}
	slices.Sort(lines)
	body := uploadedHeader + "\n" + strings.Join(append(lines, ""), "\n")
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("uploaded rows file: %w", err)
	}
	_, werr := tmp.WriteString(body)
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("uploaded rows file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("uploaded rows file %s: %w", path, err)
	}
	return nil
}

// ChangedRows returns how many of the IDs a previous upload stored
// (prev) no row of the file has now (ids): rows edited or removed since.
func ChangedRows(prev map[payload.ReportID]bool, ids []payload.ReportID) int {
	now := make(map[payload.ReportID]bool, len(ids))
	for _, id := range ids {
		now[id] = true
	}
	n := 0
	for id := range prev {
		if !now[id] {
			n++
		}
	}
	return n
}
