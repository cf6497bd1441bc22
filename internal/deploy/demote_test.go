package deploy

import (
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/server"
)

// TestStandbyIDAndAddrs: two leader processes on one PostgreSQL
// database. The second, started while the first coordinates, stands by
// without a coordinator's host: its ID is the role's, its Addrs none
// (both panicked before). The first is then cut from the database (a
// pgtest.Partition: its sessions ended, and it cannot log in again)
// until the second takes the lock: the second coordinates (it
// listens), and the first, let back, having lost the lock and demoted
// itself in place, answers ID and Addrs as a standby does, without
// panicking.
func TestStandbyIDAndAddrs(t *testing.T) {
	base, helperDSN := pgtest.Schema(t), pgtest.Schema(t)
	first := pgtest.NewPartition(t, base)
	const takeOver = 50 * time.Millisecond
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Store, c.TakeOver = helperDSN, takeOver
		if c.Role == server.Leader {
			c.Store = first.DSN
		}
	})
	standby, err := d.startWith(server.Leader, d.m, ServerConfig{Store: base, UploadListen: "127.0.0.1:0", TakeOver: takeOver})
	if err != nil {
		t.Fatal(err)
	}
	checkStandby := func(name string, s *Server) {
		t.Helper()
		if id, addrs := s.ID(), s.Addrs(); id != d.leaderID.PeerID || len(addrs) != 0 {
			t.Fatalf("%s, standing by: ID %v, addresses %v; want the leader's %v and none", name, id, addrs, d.leaderID.PeerID)
		}
	}
	checkStandby("the second process", standby)
	if id, addrs := d.leader.ID(), d.leader.Addrs(); id != d.leaderID.PeerID || len(addrs) == 0 {
		t.Fatalf("the coordinator: ID %v, addresses %v", id, addrs)
	}
	// Ended sessions alone, the first reconnected and took its lock back
	// before the second tried, under load: cut, it cannot.
	first.Cut(t)
	for deadline := time.Now().Add(60 * time.Second); len(standby.Addrs()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second process did not take over within 60 s of cutting the first from the database")
		}
	}
	first.Heal(t)
	for deadline := time.Now().Add(60 * time.Second); len(d.leader.Addrs()) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first process did not demote itself within 60 s of the take-over")
		}
	}
	checkStandby("the first process, demoted", d.leader)
}
