package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/party"
)

// rewriteRows replaces the CSV file at path with rows (score,label,p).
func rewriteRows(t *testing.T, path string, rows []party.Instance) {
	t.Helper()
	var b strings.Builder
	b.WriteString("score,label,p\n")
	for _, x := range rows {
		fmt.Fprintf(&b, "%v,%d,%v\n", x.Score, x.Label, x.Probability)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// party --csv keys a row by its content and occurrence number: the same
// rows re-exported in another order store nothing new; an edited row is
// stored as a new report and reported as changed, its old version kept;
// appended rows and a second copy of a row are stored once each. A
// release at a huge ε counts exactly the rows each version of the file
// added.
func TestPartyCSVRowIdentitySurvivesReexport(t *testing.T) {
	const n = 20
	m, tc, analyst, dir := inProcessServers(t, 1<<48, n, "replace")
	manifest := dir + "/manifest.json"
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	csv, rows := writeRows(t, n)
	run := func(t *testing.T, rows []party.Instance) string {
		t.Helper()
		rewriteRows(t, csv, rows)
		out, err := runCommand(newPartyCommand(), "--manifest", manifest, "--input", csv, "--probability-column", "p")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	stored := slices.Clone(rows)
	if out := run(t, rows); !strings.Contains(out, fmt.Sprintf("%d of %d row(s) stored by both servers\n", n, n)) {
		t.Fatalf("first run: %q", out)
	}
	reordered := slices.Clone(rows)
	slices.Reverse(reordered)
	reordered[3], reordered[11] = reordered[11], reordered[3]
	edited := slices.Clone(reordered)
	edited[5].Score, edited[5].Probability = 0.0625, 0.0625
	appended := append(slices.Clone(edited), party.Instance{Score: 0.5, Label: 1, Probability: 0.5, HasProbability: true})
	duplicated := append(slices.Clone(appended), appended[7])
	for _, c := range []struct {
		name      string
		rows      []party.Instance
		new       []party.Instance
		changed   int
		unchanged bool
	}{
		{"reordered", reordered, nil, 0, true},
		{"edited", edited, edited[5:6], 1, false},
		{"edited again, nothing new", edited, nil, 0, true},
		{"appended", appended, appended[len(edited):], 0, false},
		{"duplicated row", duplicated, duplicated[len(appended):], 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, c.rows)
			total := len(c.rows)
			want := fmt.Sprintf("%d of %d row(s) stored by both servers (%d already stored by an earlier run or attempt)\n", total, total, total-len(c.new))
			if !strings.Contains(out, want) {
				t.Errorf("said %q, want %q", out, want)
			}
			changed := count(c.changed, "row") + " changed since the last upload: their old versions stay stored — the servers keep every accepted report"
			if got := strings.Contains(out, "changed since the last upload"); got != (c.changed > 0) || c.changed > 0 && !strings.Contains(out, changed) {
				t.Errorf("said %q, want %d changed rows reported", out, c.changed)
			}
			stored = append(stored, c.new...)
		})
	}
	if got, want := releasedCounts(t, m, analyst, tc), exactRowCounts(t, m, stored); !slices.Equal(got, want) {
		t.Errorf("released counts %v, want %v (each row version once)", got, want)
	}
}

// A row key file of the position-keyed version is refused with the
// reason, not reused to store every row again.
func TestPartyCSVRefusesOldRowKey(t *testing.T) {
	m, _, _, dir := inProcessServers(t, 1, 1, "replace")
	manifest := dir + "/manifest.json"
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	csv, _ := writeRows(t, 3)
	if err := os.WriteFile(csv+".rowkey", []byte(strings.Repeat("ab", client.RowKeySize)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCommand(newPartyCommand(), "--manifest", manifest, "--input", csv, "--probability-column", "p")
	if !errors.Is(err, client.ErrOldRowKey) || !strings.Contains(err.Error(), "positions") {
		t.Errorf("err = %v, want ErrOldRowKey explaining the change", err)
	}
}

// The same rows under another file name rerun to nothing with the first
// file's --row-key; without it the party creates a new key and warns
// that rows uploaded under another key are stored again.
func TestPartyCSVNewNameNeedsItsRowKey(t *testing.T) {
	m, _, _, dir := inProcessServers(t, 1<<48, 1, "replace")
	manifest := dir + "/manifest.json"
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	first, rows := writeRows(t, 3)
	second := first + ".exported-again.csv"
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	rewriteRows(t, second, reversed)
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := newPartyCommand()
		var out, errOut strings.Builder
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"--manifest", manifest, "--probability-column", "p"}, args...))
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return out.String(), errOut.String()
	}
	if _, stderr := run("--input", first); !strings.Contains(stderr, "created row key "+first+".rowkey") || !strings.Contains(stderr, "--row-key") {
		t.Errorf("first run's warning: %q, want the created key and --row-key", stderr)
	}
	if stdout, stderr := run("--input", second, "--row-key", first+".rowkey"); !strings.Contains(stdout, "3 of 3 row(s) stored by both servers (3 already stored") || strings.Contains(stderr, "created row key") {
		t.Errorf("the rows under another name with the first key: %q, %q; want nothing new", stdout, stderr)
	}
}
