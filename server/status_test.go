package server

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// uploadToLeaderOnly sends a party's DCF key to the leader only: a report the
// helper never holds.
func (p *pair) uploadToLeaderOnly(t *testing.T, score float64) payload.ReportID {
	t.Helper()
	pt := newParty(t, score)
	key, _, err := pt.DCFKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	up := &protocol.Upload{Dataset: "d", Report: pt.ReportID(), Key: key}
	if _, err := protocol.Call[*protocol.Ack](context.Background(), p.net.Conn("party"), "leader", up); err != nil {
		t.Fatal(err)
	}
	return pt.ReportID()
}

// DropReports removes a report only the leader holds and keeps those of
// a recorded release, so the release still answers over its reports and
// a later release agrees on the same set; while a release is being
// created it refuses (ErrBusy) and drops nothing.
func TestDropReports(t *testing.T) {
	p := newPair(t, DCF, 1<<50, 1, nil)
	var both []payload.ReportID
	for _, x := range []float64{0.2, 0.7} {
		pt := newParty(t, x)
		if err := pt.UploadKeys(context.Background(), p.servers); err != nil {
			t.Fatal(err)
		}
		both = append(both, pt.ReportID())
	}
	orphan := p.uploadToLeaderOnly(t, 0.5)
	rel, _, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(both), orphan)

	p.leader.releasing.RLock()
	_, err = p.leader.DropReports("d", all)
	p.leader.releasing.RUnlock()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("DropReports during a release: %v, want ErrBusy", err)
	}
	dropped, err := p.leader.DropReports("d", all)
	if err != nil || !slices.Equal(dropped, []payload.ReportID{orphan}) {
		t.Fatalf("DropReports dropped %v (%v), want only the leader-only %v", dropped, err, orphan)
	}
	if ids, _, _ := p.leader.ReportIDs("d"); len(ids) != 2 {
		t.Errorf("the leader holds %d reports after the drop, want 2", len(ids))
	}
	if n := p.total(t, rel); n != 2 {
		t.Errorf("the release counts %d reports after the drop, want 2", n)
	}
	next, _, err := p.release(1 << 48)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.total(t, next); n != 2 {
		t.Errorf("a release after the drop counts %d reports, want 2", n)
	}
	if _, err := p.leader.DropReports("x", all); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("DropReports of an unknown dataset: %v", err)
	}
}

// Status reports the reports held, the ledger, and each release with its
// charge: ε per privacy unit of its components.
func TestStatus(t *testing.T) {
	p := newPair(t, DCF, 10, 1, nil)
	p.uploadToLeaderOnly(t, 0.5)
	if err := newParty(t, 0.1).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Unix()
	rel, _, err := p.releaseOf(0.5, payload.Count, payload.Label, payload.NotLabel)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Unix()
	for _, c := range []struct {
		s       *Server
		role    string
		reports int
	}{{p.leader, "leader", 2}, {p.helper, "helper", 1}} {
		st, err := c.s.Status("d")
		if err != nil {
			t.Fatal(err)
		}
		if st.Role.String() != c.role || st.Reports != c.reports || st.Spent.Epsilon != 1 || st.Total.Epsilon != 10 {
			t.Errorf("%s state %+v, want %d reports, ε 1 of 10 spent", c.role, st, c.reports)
		}
		if len(st.Releases) != 1 || st.Releases[0].ID != rel || st.Releases[0].Charge.Epsilon != 1 || st.Releases[0].Reports != 1 {
			t.Errorf("%s releases %+v, want %v over 1 report charging ε 1 (two privacy units)", c.role, st.Releases, rel)
		}
		if created := st.Releases[0].Created; created < before || created > after {
			t.Errorf("%s: release created at %d, want within [%d, %d]: when it was created", c.role, created, before, after)
		}
	}
}

// State lists the releases oldest first, those of unknown time (records
// older than the time) before all, ties by ID.
func TestStateListsReleasesByTime(t *testing.T) {
	p := newPair(t, DCF, 10, 1, nil)
	if err := newParty(t, 0.1).UploadKeys(context.Background(), p.servers); err != nil {
		t.Fatal(err)
	}
	var ids []payload.ReleaseID
	for range 4 {
		rel, _, err := p.release(1)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rel)
	}
	slices.SortFunc(ids, payload.CompareIDs)
	// Times against the IDs' order: the last ID oldest, the first two
	// tied, the third unknown.
	created := map[payload.ReleaseID]int64{ids[0]: 1_800_000_500, ids[1]: 1_800_000_500, ids[2]: 0, ids[3]: 1_800_000_100}
	p.leader.mu.Lock()
	for id, at := range created {
		p.leader.datasets["d"].releases[id].created = at
	}
	p.leader.mu.Unlock()
	st, err := p.leader.Status("d")
	if err != nil {
		t.Fatal(err)
	}
	var got []payload.ReleaseID
	for _, r := range st.Releases {
		got = append(got, r.ID)
		if r.Created != created[r.ID] {
			t.Errorf("release %v listed as created at %d, want %d", r.ID, r.Created, created[r.ID])
		}
	}
	if want := []payload.ReleaseID{ids[2], ids[3], ids[0], ids[1]}; !slices.Equal(got, want) {
		t.Errorf("releases listed as %v, want %v: unknown time first, then oldest first, ties by ID", got, want)
	}
}
