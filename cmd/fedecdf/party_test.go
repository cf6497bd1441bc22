package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

// csvInstances reads the probability column on its row; with --missing
// skip (issue 28, item 8) a row missing any value is left out whole, the
// others keep their probability and their file row number, and without
// it such a row is an error.
func TestCSVInstancesMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte("score;label;p\n0.9;1;0.8\n0.2;0;0.1\n0.4;1;NA\n0.5;?;0.45\n0.7;0;0.6\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := &cobra.Command{}
	cmd.SetErr(&stderr)
	o := partyOptions{csv: path, scoreCol: "score", labelCol: "label", probCol: "p", missing: "skip"}
	all, err := o.csvInstances(cmd)
	if err != nil {
		t.Fatal(err)
	}
	want := []party.Instance{
		{Score: 0.9, Label: 1, Probability: 0.8, HasProbability: true},
		{Score: 0.2, Label: 0, Probability: 0.1, HasProbability: true},
		{Score: 0.7, Label: 0, Probability: 0.6, HasProbability: true},
	}
	if !slices.Equal(all, want) || !slices.Equal(o.dataRows, []int{1, 2, 5}) || !strings.Contains(stderr.String(), "left out 2 row(s)") {
		t.Errorf("got %v rows %v (%q), want %v from data rows 1, 2, 5 and 2 left out", all, o.dataRows, stderr.String(), want)
	}
	if got := rowRangesOf([]bool{true, true, true}, o.dataRows); got != "1–2, 5" {
		t.Errorf("kept rows 1–3 printed as %q, want the file's data rows 1–2, 5", got)
	}
	o.missing = "error"
	if _, err := o.csvInstances(cmd); err == nil || !strings.Contains(err.Error(), ":4:") {
		t.Errorf("without --missing skip: %v, want an error at line 4", err)
	}
	o.probCol = ""
	if all, err := o.csvInstances(&cobra.Command{}); err == nil || all != nil {
		t.Errorf("label ? without --missing skip: %v, %v; want an error", all, err)
	}
}

// writeRows writes n scored rows (score,label,p) to a CSV file and
// returns its path and the rows.
func writeRows(t *testing.T, n int) (string, []party.Instance) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("score,label,p\n")
	rows := make([]party.Instance, n)
	for k := range rows {
		x, y := float64(rng.IntN(1000))/1000, rng.IntN(2)
		fmt.Fprintf(&b, "%v,%d,%v\n", x, y, x)
		rows[k] = party.Instance{Score: x, Label: y, Probability: x, HasProbability: true}
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// party --csv after a crash: the first run stops after k acknowledged
// rows (its context is cancelled, as by a kill), the rerun of the same
// command reports those k as already stored, and a release at a huge ε
// counts every row exactly once, in its bin.
func TestPartyCSVRerunStoresEachRowOnce(t *testing.T) {
	const n, k = 30, 11
	m, tc, analyst, dir := inProcessServers(t, 1<<48, n, "replace")
	manifest := filepath.Join(dir, "manifest.json")
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	csv, rows := writeRows(t, n)
	key, created, err := client.LoadRowKey(csv + ".rowkey")
	if err != nil || !created {
		t.Fatalf("LoadRowKey = %v, %v", created, err)
	}
	ctx, crash := context.WithCancel(context.Background())
	acked := 0
	res, err := client.SubmitRows(ctx, m, rows, key, tc, 1, func(int, bool) {
		if acked++; acked == k {
			crash()
		}
	})
	if err == nil || res.Count() != k {
		t.Fatalf("crashed run: %d stored, %v; want %d and an error", res.Count(), err, k)
	}
	out, err := runCommand(newPartyCommand(), "--manifest", manifest, "--input", csv, "--probability-column", "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d of %d row(s) stored by both servers (%d already stored by an earlier run or attempt)", n, n, k); !strings.Contains(out, want) {
		t.Errorf("rerun said %q, want %q", out, want)
	}
	// A third run stores nothing new.
	if out, err := runCommand(newPartyCommand(), "--manifest", manifest, "--input", csv, "--probability-column", "p"); err != nil || !strings.Contains(out, fmt.Sprintf("(%d already stored", n)) {
		t.Errorf("third run: %q, %v", out, err)
	}
	if got, want := releasedCounts(t, m, analyst, tc), exactRowCounts(t, m, rows); !slices.Equal(got, want) {
		t.Errorf("released counts %v, want %v (each row once)", got, want)
	}
}

// party --csv checks every row before the first upload: a bad row late
// in the file is named, and nothing is dialled (the manifest's servers
// do not exist).
func TestPartyCSVValidatesBeforeUpload(t *testing.T) {
	m, _, _, dir := inProcessServers(t, 1, 1, "replace")
	manifest := filepath.Join(dir, "manifest.json")
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	for name, row := range map[string]string{"out of grid": "1.5,1,0.5", "probability": "0.5,1,2", "label": "0.5,2,0.5"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rows.csv")
			body := "score,label,p\n0.1,0,0.1\n0.2,1,0.2\n" + row + "\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := runCommand(newPartyCommand(), "--manifest", manifest, "--input", path, "--probability-column", "p")
			if err == nil || !strings.Contains(err.Error(), "data row 3:") && !strings.Contains(err.Error(), "rows.csv:4:") {
				t.Errorf("err = %v, want the bad row named and nothing uploaded", err)
			}
			if _, statErr := os.Stat(path + ".rowkey"); err != nil && strings.Contains(err.Error(), "nothing was uploaded") && statErr == nil {
				t.Errorf("row key created although nothing was uploaded")
			}
		})
	}
}

// The old value flags still work, deprecated; the new ones are
// documented.
func TestPartyValueFlags(t *testing.T) {
	cmd := newPartyCommand()
	for _, name := range []string{"score-value", "label-value", "probability-value"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
	for _, old := range []string{"score", "label", "probability"} {
		if f := cmd.Flags().Lookup(old); f == nil || f.Deprecated == "" {
			t.Errorf("--%s is not a deprecated alias", old)
		}
	}
	var o partyOptions
	cmd = newPartyCommand()
	if err := cmd.ParseFlags([]string{"--score", "0.5", "--label", "1"}); err != nil {
		t.Fatal(err)
	}
	if all, err := o.instances(cmd); err != nil || len(all) != 1 {
		t.Errorf("deprecated flags: %v, %v", all, err)
	}
}

func TestRowRanges(t *testing.T) {
	if got := rowRanges([]bool{true, true, true, false, true, false, true, true}); got != "1–3, 5, 7–8" {
		t.Errorf("rowRanges = %q", got)
	}
}

// party --csv stops at the first server failure: the helper (a stand-in
// that forwards to the real helper) goes away at the (k+1)-th upload.
// The party uploads nothing after it — the leader holds exactly k+1
// reports and the helper saw k+1 uploads — exits with an error naming the
// row and the helper, prints the stored rows and says that a rerun
// resumes; the rerun against the real helper then stores every row.
func TestPartyCSVStopsAtFirstServerFailure(t *testing.T) {
	const n, k = 30, 11
	c := startCluster(t, 1<<48, n, "replace")
	csv, _ := writeRows(t, n)

	fwd, err := p2p.New(p2p.Config{Key: mustIdentity(t).Key, Logger: c.tc.Logger, Backoff: c.tc.Backoff,
		Peers: map[transport.PeerID]peer.AddrInfo{"helper": {ID: c.servers["helper"].ID(), Addrs: c.servers["helper"].Addrs()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fwd.Close()
	standIn, err := p2p.New(p2p.Config{Key: c.ids["helper"].Key, Self: "helper", Logger: c.tc.Logger,
		Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")}})
	if err != nil {
		t.Fatal(err)
	}
	goAway := sync.OnceFunc(func() { standIn.Close() })
	defer goAway()
	var uploads atomic.Int32
	standIn.Handle(p2p.ReportProtocol, nil, func(ctx context.Context, _ transport.PeerID, req []byte) []byte {
		if uploads.Add(1) <= k {
			resp, err := fwd.Conn(p2p.ReportProtocol).Call(ctx, "helper", req)
			if err != nil {
				return protocol.Encode(&protocol.Error{Text: err.Error()})
			}
			return resp
		}
		go goAway() // Close waits for this handler
		return protocol.Encode(&protocol.Error{Text: "helper: shutting down"})
	})
	flaky := *c.m
	flaky.Helper.Addrs = nil
	for _, a := range standIn.Addrs() {
		flaky.Helper.Addrs = append(flaky.Helper.Addrs, a.String())
	}
	flakyPath, realPath := filepath.Join(c.dir, "flaky.json"), filepath.Join(c.dir, "manifest.json")
	if err := errors.Join(flaky.Write(flakyPath), c.m.Write(realPath)); err != nil {
		t.Fatal(err)
	}

	args := []string{"--input", csv, "--probability-column", "p", "--concurrency", "1", "--retry-window", "1s"}
	out, err := runCommand(newPartyCommand(), append([]string{"--manifest", flakyPath}, args...)...)
	if err == nil {
		t.Fatalf("party --csv succeeded although the helper went away:\n%s", out)
	}
	for _, want := range []string{fmt.Sprintf("data row %d:", k+1), "acknowledged by the leader only; upload to the helper", "stopped at the first row still failing", "rerun the same command"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	for _, want := range []string{fmt.Sprintf("%d of %d row(s) stored by both servers", k, n),
		fmt.Sprintf("stored by both servers (row 1 is the first after the header): 1–%d\n", k),
		fmt.Sprintf("acknowledged by the leader only (the other may hold them too, if its acknowledgement was lost): %d\n", k+1),
		fmt.Sprintf("not acknowledged by both servers (a rerun stores them): %d–%d\n", k+1, n)} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("party --csv with the helper gone: %v\n%s", err, out)
	if got := uploads.Load(); got != k+1 {
		t.Errorf("the helper saw %d uploads, want %d: the party went on after the failure", got, k+1)
	}
	if got, err := c.servers["leader"].NumReports(); err != nil || got != k+1 {
		t.Errorf("the leader holds %d reports (%v), want %d: the party went on after the failure", got, err, k+1)
	}

	out, err = runCommand(newPartyCommand(), append([]string{"--manifest", realPath}, args...)...)
	if want := fmt.Sprintf("%d of %d row(s) stored by both servers (%d already stored by an earlier run or attempt)", n, n, k+1); err != nil || !strings.Contains(out, want) {
		t.Errorf("rerun: %v; output %q, want %q", err, out, want)
	}
	for role, srv := range c.servers {
		if got, err := srv.NumReports(); err != nil || got != n {
			t.Errorf("after the rerun the %s holds %d reports (%v), want %d", role, got, err, n)
		}
	}
}

func mustIdentity(t *testing.T) *manifest.Identity {
	t.Helper()
	id, err := manifest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}
