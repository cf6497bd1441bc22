package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
)

// accepted counts the reports a server process has acknowledged (it
// runs with --log-level debug).
func (c *crashCluster) accepted(role string) int {
	return strings.Count(c.logs[role].String(), `msg="report accepted"`)
}

// partyRun is one `fedecdf party` run in this process, in the background.
type partyRun struct {
	out  string
	err  error
	done chan struct{}
}

func startParty(args ...string) *partyRun {
	r := &partyRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.out, r.err = runCommand(newPartyCommand(), args...)
	}()
	return r
}

// killAfter SIGKILLs the server of role once it has acknowledged k
// reports in its current run, failing if the party finishes first.
func (c *crashCluster) killAfter(role string, k int, r *partyRun) {
	c.t.Helper()
	base := c.accepted(role)
	for c.accepted(role) < base+k {
		select {
		case <-r.done:
			c.t.Fatalf("the party finished before the %s acknowledged %d reports: %v\n%s", role, k, r.err, r.out)
		case <-time.After(5 * time.Millisecond):
		}
	}
	c.kill(role)
}

// rowIDs returns the report IDs of the rows of csv under its row key.
func rowIDs(t *testing.T, dataset, csv string, rows []party.Instance) map[payload.ReportID]bool {
	t.Helper()
	key, _, err := client.LoadRowKey(csv + ".rowkey")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[payload.ReportID]bool{}
	for _, id := range client.RowReportIDs(key, dataset, rows) {
		ids[id] = true
	}
	return ids
}

// storedIDs returns the report IDs in a server's store, a bbolt file or
// a postgres:// DSN (its process stopped).
func storedIDs(t *testing.T, path, dataset string) map[payload.ReportID]bool {
	t.Helper()
	s, err := store.OpenBackend(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := map[payload.ReportID]bool{}
	err = s.Reports(dataset, func(id payload.ReportID, _ []byte) error {
		if ids[id] {
			return fmt.Errorf("report %v stored twice", id)
		}
		ids[id] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestPartyRetriesAcrossServerKill runs `fedecdf party --csv` against
// leader and helper processes on 127.0.0.1 and kills one mid-upload
// with SIGKILL. (a) The leader dies after 20 acknowledged rows and
// restarts a second later: within --retry-window 30s the party stores
// all 60 rows and exits 0. (b) The helper dies after 20 rows and stays
// down longer than --retry-window 1s: the party fails, saying which
// rows both servers hold, which the leader alone holds and which a
// rerun stores; the rerun, with the helper back, stores exactly those.
// Both stores then hold each of the 120 rows' report IDs exactly once,
// and a release counts each row once.
func TestPartyRetriesAcrossServerKill(t *testing.T) {
	const n, k, concurrency = 60, 20, 4
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newClusterWith(t, ctx, 2*n, clusterOptions{serverArgs: []string{"--log-level", "debug"}})
	csvA, rows := writeRows(t, n)
	csvB, _ := writeRows(t, n)
	party := func(csv, window string) []string {
		return []string{"--manifest", c.manifest, "--input", csv, "--probability-column", "p", "--concurrency", strconv.Itoa(concurrency), "--retry-window", window}
	}

	run := startParty(party(csvA, "30s")...)
	c.killAfter("leader", k, run)
	time.Sleep(time.Second) // the outage
	c.start("leader")
	<-run.done
	// A row the leader stored but whose acknowledgement the kill lost
	// comes back as a duplicate.
	if want := fmt.Sprintf("%d of %d row(s) stored by both servers", n, n); run.err != nil || !strings.HasPrefix(run.out, want) {
		t.Fatalf("party across the leader's restart: %v\n%s\nwant %q", run.err, run.out, want)
	}
	t.Logf("(a) leader killed after %d rows, back 1 s later, --retry-window 30s: %s", k, strings.TrimSpace(run.out))

	run = startParty(party(csvB, "1s")...)
	c.killAfter("helper", k, run)
	<-run.done
	if run.err == nil {
		t.Fatalf("party succeeded with the helper down:\n%s", run.out)
	}
	stored := regexp.MustCompile(`^(\d+) of \d+ row\(s\) stored by both servers`).FindStringSubmatch(run.out)
	for _, want := range []string{"not acknowledged by both servers (a rerun stores them): ", "upload to the helper", "connection refused"} {
		if !strings.Contains(run.out+run.err.Error(), want) {
			t.Errorf("the failed run does not say %q:\n%s%v", want, run.out, run.err)
		}
	}
	if stored == nil {
		t.Fatalf("the failed run does not say how many rows are stored:\n%s", run.out)
	}
	// The helper logs a report accepted before its acknowledgement
	// reaches the party, so up to the party's --concurrency uploads in
	// flight at the kill may lack the helper's acknowledgement.
	both, _ := strconv.Atoi(stored[1])
	if both < k-concurrency || both >= n {
		t.Errorf("%d rows stored before the helper went away for good, want at least %d − %d in flight and fewer than %d", both, k, concurrency, n)
	}
	t.Logf("(b) helper killed after %d rows, down for good, --retry-window 1s: %d rows lost\n%s%v", k, n-both, run.out, run.err)

	c.start("helper")
	out, err := runCommand(newPartyCommand(), party(csvB, "30s")...)
	already := regexp.MustCompile(`\((\d+) already stored by an earlier run or attempt\)`).FindStringSubmatch(out)
	if err != nil || !strings.HasPrefix(out, fmt.Sprintf("%d of %d row(s) stored by both servers", n, n)) || already == nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	if prior, _ := strconv.Atoi(already[1]); prior < both {
		t.Errorf("rerun: %d rows already stored, want at least the %d both servers held", prior, both)
	}
	t.Logf("(b) rerun with the helper back: %s", strings.TrimSpace(out))

	e, err := c.release()
	if err != nil {
		t.Fatal(err)
	}
	if want := exactRowCounts(t, c.m, append(slices.Clone(rows), rows...)); e.N != 2*n || !slices.Equal(e.Counts, want) {
		t.Errorf("release over %d reports with counts %v, want %d reports, each row once: %v", e.N, e.Counts, 2*n, want)
	}
	c.kill("leader")
	c.kill("helper")
	want := rowIDs(t, c.m.Dataset, csvA, rows)
	maps.Copy(want, rowIDs(t, c.m.Dataset, csvB, rows))
	for _, role := range []string{"leader", "helper"} {
		if got := storedIDs(t, filepath.Join(c.dir, role+".db"), c.m.Dataset); !maps.Equal(got, want) {
			t.Errorf("the %s holds %d reports, want the %d rows' IDs exactly", role, len(got), len(want))
		}
	}
}

// releasedCounts are the prefix counts of a new ECDF release that
// analyst asks the deployment of m for.
func releasedCounts(t *testing.T, m *manifest.Manifest, analystID *manifest.Identity, tc p2p.Config) []int64 {
	t.Helper()
	a, err := analyst.NewAnalyst(m, analystID, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e, err := a.ECDF(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return e.Counts
}

// exactRowCounts are the prefix counts of the rows' bins.
func exactRowCounts(t *testing.T, m *manifest.Manifest, rows []party.Instance) []int64 {
	t.Helper()
	g, err := m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int64, g.Len())
	for _, r := range rows {
		b, err := g.Bin(r.Score)
		if err != nil {
			t.Fatal(err)
		}
		for i := b - 1; i < len(want); i++ {
			want[i]++
		}
	}
	return want
}
