package main

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
)

// TestSIGKILLDuringConcurrentUploads kills the leader with SIGKILL while
// 32 uploads at a time reach it, so that its group commit holds many
// reports in flight: every report the leader acknowledged before dying
// is in its store afterwards (acknowledgement follows the fsync of the
// batch that holds it), and nothing else is there but reports that were
// sent.
func TestSIGKILLDuringConcurrentUploads(t *testing.T) {
	const n, workers, killAfter = 600, 32, 150
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := newCrashCluster(t, ctx, 1)
	p := c.newParty()
	conn := c.rawHost(c.newIdentityKey(), "").Conn(p2p.ReportProtocol)
	reports := make(chan *client.Report, n)
	sent := map[payload.ReportID]bool{}
	for _, x := range client.DemoInstances(n, 17) {
		r, err := p.NewReport(x)
		if err != nil {
			t.Fatal(err)
		}
		sent[r.ID] = true
		reports <- r
	}
	close(reports)

	sendCtx, stopSending := context.WithCancel(ctx)
	killed := make(chan struct{})
	var (
		mu    sync.Mutex
		acked []payload.ReportID
		kill  sync.Once
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for r := range reports {
				if _, err := protocol.Call[*protocol.Ack](sendCtx, conn, manifest.LeaderName, r.Leader); err != nil {
					continue // sent during or after the kill: not acknowledged
				}
				mu.Lock()
				acked = append(acked, r.ID)
				if len(acked) == killAfter {
					kill.Do(func() {
						go func() {
							c.kill("leader")
							stopSending()
							close(killed)
						}()
					})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stopSending()
	if len(acked) < killAfter {
		t.Fatalf("only %d of %d reports acknowledged before the kill", len(acked), killAfter)
	}
	<-killed // the leader has exited: its store is as the kill left it

	s, err := store.Open(filepath.Join(c.dir, "leader.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stored := map[payload.ReportID]bool{}
	err = s.Reports(c.m.Dataset, func(id payload.ReportID, _ []byte) error {
		if !sent[id] {
			t.Errorf("the store holds report %v, never sent", id)
		}
		stored[id] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("report %v was acknowledged but is not in the store after SIGKILL", id)
		}
	}
	t.Logf("%d reports acknowledged, %d stored when the leader was killed", len(acked), len(stored))
}
