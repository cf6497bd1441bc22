package store

import (
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// TestProcessesHeartbeat: each process of a shared database records its
// state under its own ID (a second beat updates its row), Processes
// lists those seen recently, the coordinator first, and forgets a
// process that left or stopped beating.
func TestProcessesHeartbeat(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := openShared(t, dsn), openShared(t, dsn)
	coord := Process{ID: "a", Coordinator: true, UploadAddr: "127.0.0.1:7401", Listen: "/ip4/127.0.0.1/tcp/4001", Uploads: 3}
	standby := Process{ID: "b", UploadAddr: "127.0.0.1:7411", Listen: "", Uploads: 5}
	for _, beat := range []struct {
		p  *Postgres
		pr Process
	}{{b, standby}, {a, coord}, {b, Process{ID: "b", UploadAddr: standby.UploadAddr, Uploads: 7}}} {
		if err := beat.p.Heartbeat(beat.pr, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	ps, now, err := a.Processes(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].ID != "a" || !ps[0].Coordinator || ps[0].Uploads != 3 || ps[0].UploadAddr != coord.UploadAddr || ps[0].Listen != coord.Listen ||
		ps[1].ID != "b" || ps[1].Coordinator || ps[1].Uploads != 7 {
		t.Fatalf("processes %+v, want a (coordinator, 3 uploads) then b (standby, 7 uploads)", ps)
	}
	for _, pr := range ps {
		if pr.Seen.After(now) || pr.Started.After(pr.Seen) || now.Sub(pr.Seen) > time.Minute {
			t.Errorf("process %s started %v, seen %v, now %v", pr.ID, pr.Started, pr.Seen, now)
		}
	}
	if err := b.Leave("b"); err != nil {
		t.Fatal(err)
	}
	// a's row, last seen more than 0 s ago, is forgotten by b's next beat
	// with forget 0, and b's own is kept.
	time.Sleep(10 * time.Millisecond)
	if err := b.Heartbeat(standby, 0); err != nil {
		t.Fatal(err)
	}
	if ps, _, err = a.Processes(time.Minute); err != nil || len(ps) != 1 || ps[0].ID != "b" {
		t.Fatalf("after b left and beat again forgetting the others: %+v, %v; want b only", ps, err)
	}
	if ps, _, err = a.Processes(0); err != nil || len(ps) != 0 {
		t.Errorf("processes seen within 0 s: %+v, %v; want none", ps, err)
	}
}
