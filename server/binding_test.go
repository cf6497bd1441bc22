package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// lose removes the stored upload of report id from the durable state of
// both servers, as a storage fault or a partial restore would.
func (r *restartable) lose(t *testing.T, id payload.ReportID) {
	t.Helper()
	for _, st := range r.store {
		n := len(st.uploads)
		st.uploads = slices.DeleteFunc(st.uploads, func(b []byte) bool {
			return mustDecode(b).(*protocol.Upload).Report == id
		})
		if len(st.uploads) != n-1 {
			t.Fatalf("report %v was stored %d times", id, n-len(st.uploads))
		}
	}
}

// restartBoth restarts the helper, then the leader, from their stores.
func (r *restartable) restartBoth(t *testing.T) {
	t.Helper()
	r.restart(t, Helper)
	r.restart(t, Leader)
}

// TestReleaseBoundToItsReportSet is the audit's attack: one accepted
// report is lost from both stores, the servers restart, one new report
// is accepted — the count is what it was — and the old release is read
// again. Both servers refuse (ErrReportSetChanged, naming the release,
// the counts and the digests) rather than answer with the same noise over
// another set, which would reveal the new report minus the lost one.
func TestReleaseBoundToItsReportSet(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			r := newRestartable(t, b)
			ids := r.uploadVerified(t, 0.1, 0.5, 0.9, 0.3)
			if err := r.leader.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			rel, n, err := r.release(1)
			if err != nil || n != 4 {
				t.Fatalf("release: %d reports, %v", n, err)
			}
			r.noisyPrefixes(t, rel)
			r.lose(t, ids[2])
			r.restartBoth(t)
			r.uploadVerified(t, 0.7)
			if err := r.leader.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := len(counted(r.leader, "d")); got != 4 {
				t.Fatalf("the leader counts %d reports, want 4 (3 kept and 1 new)", got)
			}
			for _, srv := range []*Server{r.leader, r.helper} {
				if errs := srv.UnboundReleases("d"); len(errs) != 1 || !errors.Is(errs[0], ErrReportSetChanged) {
					t.Fatalf("%v: unbound releases %v, want the old one", srv.cfg.Role, errs)
				}
				s := srv.datasets["d"]
				err := srv.releaseSums(s, s.releases[rel])
				want := fmt.Sprintf("release %v was created over 4 reports", rel)
				if !errors.Is(err, ErrReportSetChanged) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "holds 3") || !strings.Contains(err.Error(), ids[2].String()) {
					t.Fatalf("%v: the old release over the changed set: %v", srv.cfg.Role, err)
				}
			}
			msg := &protocol.Query{Dataset: "d", Release: rel, Component: payload.Count, Prefixes: []int{1, bins}}
			if _, err := protocol.Call[*protocol.Answer](t.Context(), r.net.Conn("analyst"), "leader", msg); err == nil || !strings.Contains(err.Error(), ErrReportSetChanged.Error()) {
				t.Fatalf("the analyst's query of the old release: %v", err)
			}
		})
	}
}

// TestOldReleasesReadableAfterGrowth: releases created while a verified
// dataset grows are each over the reports accepted when it was created;
// after both servers restart, with more reports accepted since, every
// old release answers exactly as before (the same noise over the same
// set, re-derived from its reports), and a new release counts them all.
func TestOldReleasesReadableAfterGrowth(t *testing.T) {
	for _, b := range verifiedBackends {
		t.Run(string(b), func(t *testing.T) {
			r := newRestartable(t, b)
			var rels []payload.ReleaseID
			var answers [][]uint64
			for _, scores := range [][]float64{{0.1, 0.5}, {0.9}, {0.3, 0.2, 0.8}} {
				r.uploadVerified(t, scores...)
				if err := r.leader.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
				rel, _, err := r.release(1)
				if err != nil {
					t.Fatal(err)
				}
				rels, answers = append(rels, rel), append(answers, r.noisyPrefixes(t, rel))
			}
			r.uploadVerified(t, 0.6)
			for range 2 {
				r.restartBoth(t)
				if err := r.leader.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
				for _, srv := range []*Server{r.leader, r.helper} {
					if errs := srv.UnboundReleases("d"); len(errs) != 0 {
						t.Fatalf("%v: unbound releases %v, want none", srv.cfg.Role, errs)
					}
				}
				for i, rel := range rels {
					if got := r.noisyPrefixes(t, rel); !slices.Equal(got, answers[i]) {
						t.Fatalf("release %d after the restart: %v, want %v", i, got, answers[i])
					}
				}
			}
			rel, n, err := r.release(1 << 48)
			if err != nil || n != 7 || r.total(t, rel) != 7 {
				t.Fatalf("a new release: %d reports, %v", n, err)
			}
		})
	}
}
