package main

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// TestAdditiveSIGKILL runs an additive deployment as `fedecdf server`
// processes whose leader verifies every 20 ms, and SIGKILLs the leader
// and the helper in turn at random moments while reports arrive and a
// release (which verifies first) runs: wherever the exchange of Prepare,
// Prepared and Decide was cut, once both run again every honest report
// counts at both servers, once, and every forgery is rejected at both
// for its reason (fedecdf status), also after both are killed again.
func TestAdditiveSIGKILL(t *testing.T) {
	const rounds, honestPerRound, forgedPerRound = 6, 8, 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	budget := strconv.FormatFloat(64*crashEpsilon, 'g', -1, 64)
	c := newClusterWith(t, ctx, 1, clusterOptions{
		manifestArgs: []string{"--backend", "additive", "--budget-epsilon", budget},
		serverArgs:   []string{"--peer-check", "20ms"},
	})
	g, err := c.m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	p := c.newParty()
	rng := rand.New(rand.NewPCG(17, 18))
	var honest []*client.Report
	bins := map[*client.Report]int{}
	wantRejected := map[string]int{}
	kinds := verify.Forgeries()
	for round := range rounds {
		for _, x := range client.DemoInstances(honestPerRound, uint64(round)) {
			r, err := p.NewReport(x)
			if err != nil {
				t.Fatal(err)
			}
			if bins[r], err = g.Bin(x.Score); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Send(ctx, r); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			honest = append(honest, r)
		}
		if err := client.SubmitForgeries(ctx, c.m, forgedPerRound, crashTransport, uint64(round)); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		releasing, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if a, err := analyst.NewAnalyst(c.m, c.ids["analyst"], crashTransport); err == nil {
				_, _ = a.ECDF(releasing) // may be cut by the crash
				a.Close()
			}
		}()
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
		c.crash([]string{"leader", "helper"}[round%2])
		stop()
		<-done
	}
	// Three parties a round: one forgery per rejection reason.
	for _, k := range kinds {
		wantRejected[verify.Reason(k.Want)] = rounds
	}
	check := func(when string) {
		t.Helper()
		e, err := c.release()
		if err != nil {
			t.Fatalf("%s: release: %v", when, err)
		}
		if want := exactCounts(c.m, honest, bins); e.N != int64(len(honest)) || !slices.Equal(e.Counts, want) {
			t.Fatalf("%s: release over %d reports with counts\n%v\nwant the %d honest ones:\n%v", when, e.N, e.Counts, len(honest), want)
		}
		st, err := analyst.AskStatus(ctx, c.m, c.ids["analyst"], crashTransport)
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range st.Servers {
			if !maps.Equal(sv.Rejected, wantRejected) || sv.Reports == nil || *sv.Reports != len(honest) {
				t.Errorf("%s: the %s holds %v verified reports and rejected %v; want %d and %v", when, sv.Role, sv.Reports, sv.Rejected, len(honest), wantRejected)
			}
		}
	}
	check("after the crashes")
	c.kill("leader")
	c.crash("helper")
	c.start("leader")
	check("after both restarted")
}
