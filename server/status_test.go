package server

import (
	"context"
	"errors"
	"slices"
	"testing"

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
	rel, _, err := p.releaseOf(0.5, payload.Count, payload.Label, payload.NotLabel)
	if err != nil {
		t.Fatal(err)
	}
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
	}
}
