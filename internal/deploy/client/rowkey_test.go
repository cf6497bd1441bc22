package client

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// The row identity is a stability contract: a rerun must recompute the
// IDs (and report keys) an earlier version stored. Changing these
// answers needs a new version label and header (ErrOldRowKey).
// The expected values were checked against an independent HMAC-SHA256
// of the same encoding (Python's hmac module).
func TestRowReportIDKnownAnswer(t *testing.T) {
	key := []byte(strings.Repeat("k", RowKeySize))
	x := party.Instance{Score: 0.25, Label: 1, Probability: 0.75, HasProbability: true}
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"id occ 0", idBytes(RowReportID(key, "ds", 0, x)), "cbbdbf51d2578fe4bb73d043b23724c4"},
		{"id occ 1", idBytes(RowReportID(key, "ds", 1, x)), "7dfd9bc5b771fe47a9c512bb3232042f"},
		{"keys seed", rowMAC(key, rowKeysLabel, "ds", 0, x), "66f887119a7762f69d9ebc413a5d43a849b65db1ceedc143fe9f0eb55182fb87"},
	} {
		if got := hex.EncodeToString(c.got); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
}

func idBytes(id payload.ReportID) []byte { return id[:] }

func TestRowReportIDsIgnorePosition(t *testing.T) {
	key := []byte(strings.Repeat("k", RowKeySize))
	a := party.Instance{Score: 0.25, Label: 1}
	b := party.Instance{Score: 0.5, Label: 0}
	ids := RowReportIDs(key, "ds", []party.Instance{a, b, a})
	moved := RowReportIDs(key, "ds", []party.Instance{b, a, a})
	if ids[0] != moved[1] || ids[2] != moved[2] || ids[1] != moved[0] {
		t.Errorf("moving rows changed their IDs: %v vs %v", ids, moved)
	}
	if ids[0] == ids[2] {
		t.Errorf("two copies of a row share an ID")
	}
	if got := RowOccurrences([]party.Instance{a, b, a, a, b}); got[0] != 0 || got[1] != 0 || got[2] != 1 || got[3] != 2 || got[4] != 1 {
		t.Errorf("RowOccurrences = %v", got)
	}
	if RowReportID(key, "ds", 0, a) == RowReportID(key, "other", 0, a) {
		t.Errorf("the dataset does not key the ID")
	}
}

func TestLoadRowKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.rowkey")
	key, created, err := LoadRowKey(path)
	if err != nil || !created || len(key) != RowKeySize {
		t.Fatalf("create: %x, %v, %v", key, created, err)
	}
	again, created, err := LoadRowKey(path)
	if err != nil || created || string(again) != string(key) {
		t.Fatalf("reload: %x, %v, %v", again, created, err)
	}
	for name, c := range map[string]struct {
		body    string
		mode    os.FileMode
		want    string
		wantOld bool
	}{
		"old version":    {strings.Repeat("0f", RowKeySize) + "\n", 0o600, "positions", true},
		"short":          {rowKeyHeader + "\n0f0f\n", 0o600, "hex-encoded", false},
		"other header":   {"fedecdf row key v9\n" + strings.Repeat("0f", RowKeySize) + "\n", 0o600, "does not hold the line", false},
		"world-readable": {rowKeyHeader + "\n" + strings.Repeat("0f", RowKeySize) + "\n", 0o644, "chmod 600", false},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(p, []byte(c.body), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, c.mode); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadRowKey(p)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrOldRowKey) != c.wantOld {
				t.Errorf("err = %v, want %q (ErrOldRowKey %v)", err, c.want, c.wantOld)
			}
		})
	}
}

func TestUploadedRows(t *testing.T) {
	path := UploadedRowsPath(filepath.Join(t.TempDir(), "rows.rowkey"))
	if ids, err := ReadUploadedRows(path); err != nil || len(ids) != 0 {
		t.Fatalf("missing file: %v, %v", ids, err)
	}
	key := []byte(strings.Repeat("k", RowKeySize))
	rows := []party.Instance{{Score: 0.1}, {Score: 0.2, Label: 1}, {Score: 0.1}}
	ids := RowReportIDs(key, "ds", rows)
	want := map[payload.ReportID]bool{ids[0]: true, ids[1]: true, ids[2]: true}
	if err := WriteUploadedRows(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadUploadedRows(path)
	if err != nil || len(got) != 3 || !got[ids[0]] || !got[ids[1]] || !got[ids[2]] {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	edited := []party.Instance{{Score: 0.1}, {Score: 0.3, Label: 1}}
	if n := ChangedRows(got, RowReportIDs(key, "ds", edited)); n != 2 {
		t.Errorf("ChangedRows after an edit and a removal = %d, want 2", n)
	}
	if n := ChangedRows(got, RowReportIDs(key, "ds", []party.Instance{rows[2], rows[1], rows[0]})); n != 0 {
		t.Errorf("ChangedRows after a reorder = %d, want 0", n)
	}
	for name, body := range map[string]string{"old": "0011\n", "bad id": uploadedHeader + "\nzz\n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadUploadedRows(path)
		if err == nil || errors.Is(err, ErrOldRowKey) != (name == "old") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
