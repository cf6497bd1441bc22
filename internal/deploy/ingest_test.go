package deploy

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/bench"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
)

// TestLoadCheck runs a small load over fresh and shared hosts: every
// report is acknowledged and Check finds none lost or duplicated. Then
// the leader's store is tampered with, as a faulty server might: an
// acknowledged report overwritten with other bytes counts as lost, and
// an entry under an ID never sent and an upload stored again under
// another ID count as duplicated.
func TestLoadCheck(t *testing.T) {
	for _, hosts := range []int{0, 2} {
		d := newDeployment(t, hugeEpsilon, 1)
		sent, err := bench.RunLoad(context.Background(), d.m, bench.Load{Parties: 24, Hosts: hosts, Concurrency: 6, Seed: 3, Transport: fast})
		if err != nil || sent.Acked != 24 || sent.Failed != 0 {
			t.Fatalf("hosts %d: %d acknowledged, %d failed, %v; want all 24", hosts, sent.Acked, sent.Failed, err)
		}
		d.leader.Close()
		d.helper.Close()
		leader, helper := filepath.Join(d.dir, "leader.db"), filepath.Join(d.dir, "helper.db")
		if lost, dup, err := sent.Check(d.m.Dataset, leader, helper); lost != 0 || dup != 0 || err != nil {
			t.Fatalf("hosts %d: %d lost, %d duplicated, %v; want none", hosts, lost, dup, err)
		}

		s, err := store.Open(leader)
		if err != nil {
			t.Fatal(err)
		}
		var ids []payload.ReportID
		var first []byte
		err = s.Reports(d.m.Dataset, func(id payload.ReportID, upload []byte) error {
			ids = append(ids, id)
			if first == nil {
				first = upload
			}
			return nil
		})
		if err == nil { // the store keeps a report's first upload: delete it first
			_, err = s.DeleteReports(d.m.Dataset, ids[1:2])
		}
		if err == nil {
			err = s.PutReport(d.m.Dataset, ids[1], []byte("other bytes"))
		}
		if err == nil {
			err = s.PutReport(d.m.Dataset, payload.ReportID{0xff, 1}, []byte("never sent"))
		}
		if err == nil {
			err = s.PutReport(d.m.Dataset, payload.ReportID{0xff, 2}, first)
		}
		if err := errors.Join(err, s.Close()); err != nil {
			t.Fatal(err)
		}
		if lost, dup, err := sent.Check(d.m.Dataset, leader, helper); lost != 1 || dup != 2 || err != nil {
			t.Fatalf("hosts %d, tampered store: %d lost, %d duplicated, %v; want 1 and 2", hosts, lost, dup, err)
		}
	}
}
