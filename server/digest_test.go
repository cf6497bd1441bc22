package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// TestReplayedUploadCheckedAgainstWhatWasAccepted is the store edited by
// someone who fixes up its checksums: a restarted server handed, for a
// report it accepted (finally, or as the helper tentatively), an upload
// other than the one it accepted refuses it, naming the report, before
// computing on it — ahead of the replay (PrepareReplay, ErrUploadChanged)
// and in the replay itself; the unedited store replays cleanly (the
// control), so the refusal is the digest's doing. On each of
// replayStores: the helper's verdicts and uploads in memory, or in
// PostgreSQL (internal/store; the upload's row edited with SQL).
func TestReplayedUploadCheckedAgainstWhatWasAccepted(t *testing.T) {
	for _, db := range replayStores {
		for _, tc := range []struct {
			name    string
			backend Backend
			stage   byte
		}{
			{"dcf final", DCF, stageFinal}, {"additive final", Additive, stageFinal},
			{"dcf tentative", DCF, stageTentative},
		} {
			t.Run(db.name+"/"+tc.name, func(t *testing.T) {
				r := newRestartable(t, tc.backend)
				st := r.store[Helper]
				var replace func(up *protocol.Upload)
				if db.open != nil {
					st.db, replace = db.open(t)
					r.restart(t, Helper)
					r.restart(t, Leader)
				}
				r.uploadVerified(t, 0.1, 0.5, 0.9)
				if tc.stage == stageTentative {
					r.net.SetFaults(cutDecide)
				}
				_ = r.leader.Verify(context.Background())
				r.net.SetFaults(nil)
				if n := countStage(t, st, tc.stage); n != 3 {
					t.Fatalf("%d of the helper's records of stage %d, want 3", n, tc.stage)
				}
				srv, err := New(r.config(Helper))
				if err != nil {
					t.Fatal(err)
				}
				stored := st.stored(t)
				if _, err := srv.PrepareReplay("d", stored); err != nil {
					t.Fatalf("the unedited store: %v", err)
				}
				up := mustDecode(stored[1]).(*protocol.Upload)
				up.Share[len(up.Share)/2] ^= 0x10
				edited := append([][]byte{}, stored...)
				if edited[1] = protocol.Encode(up); replace != nil {
					replace(up)
					edited = st.stored(t)
				}
				srv, err = New(r.config(Helper))
				if err != nil {
					t.Fatal(err)
				}
				_, err = srv.PrepareReplay("d", edited)
				if !errors.Is(err, ErrUploadChanged) || !strings.Contains(err.Error(), up.Report.String()) {
					t.Fatalf("replaying an edited upload ahead: %v, want ErrUploadChanged naming report %v", err, up.Report)
				}
				resp := mustDecode(srv.Handle(context.Background(), "store", edited[1]))
				if e, ok := resp.(*protocol.Error); !ok || !strings.Contains(e.Text, ErrUploadChanged.Error()) || !strings.Contains(e.Text, up.Report.String()) {
					t.Fatalf("replaying an edited upload: %+v, want a refusal naming ErrUploadChanged and the report", resp)
				}
			})
		}
	}
}

// replayStores are the stores of the helper's verdicts and uploads
// TestReplayedUploadCheckedAgainstWhatWasAccepted runs on: open (nil:
// in memory) returns the database and a function replacing a report's
// stored upload in it, its record's checksum recomputed.
var replayStores = []struct {
	name string
	open func(t *testing.T) (durableDB, func(up *protocol.Upload))
}{
	{"memory", nil},
	{"postgres", func(t *testing.T) (durableDB, func(up *protocol.Upload)) {
		dsn := pgtest.Schema(t)
		db, err := store.OpenPostgres(dsn, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, func(up *protocol.Upload) {
			where := fmt.Sprintf(`WHERE dataset = 'd' AND id = '\x%x'`, up.Report[:])
			var rec []byte
			pgtest.QueryRow(t, dsn, `SELECT rec FROM fedecdf_reports `+where, &rec)
			body := append(rec[:len(up.Report)+8:len(up.Report)+8], protocol.Encode(up)...)
			rec = store.Seal("reports/d", up.Report[:], body)
			pgtest.Exec(t, dsn, fmt.Sprintf(`UPDATE fedecdf_reports SET rec = '\x%x' `, rec)+where)
		}
	}},
}

// stored returns the uploads d holds, in the order they were recorded:
// read back from its database, if it has one.
func (d *durable) stored(t *testing.T) [][]byte {
	t.Helper()
	if d.db == nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		return slices.Clone(d.uploads)
	}
	var out [][]byte
	if err := d.db.Reports("d", func(_ payload.ReportID, b []byte) error {
		out = append(out, slices.Clone(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// cutDecide loses every Decide, so that the helper keeps its tentative
// verdicts.
func cutDecide(_, _ transport.PeerID, req []byte) transport.Fault {
	if len(req) > 1 && protocol.Kind(req[1]) == protocol.KindDecide {
		return transport.LoseRequest
	}
	return transport.Deliver
}

// countStage counts the verdict records of stage in st.
func countStage(t *testing.T, st *durable, stage byte) int {
	t.Helper()
	n := 0
	err := st.verdictStore().LoadVerdicts("d", func(_ payload.ReportID, b []byte) error {
		rec, err := parseVerdictRecord(b)
		if err == nil && rec.stage == stage {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// editStored replaces, in the durable state of both servers, the stored
// upload of report id by one with a byte of its key or share flipped:
// a store edited after the servers started, by someone who also fixed
// up its checksums.
func (r *restartable) editStored(t *testing.T, id payload.ReportID) {
	t.Helper()
	for _, st := range r.store {
		st.mu.Lock()
		for i, b := range st.uploads {
			if up := mustDecode(b).(*protocol.Upload); up.Report == id {
				body := up.Share
				if len(up.Key) > 0 {
					body = up.Key
				}
				body[len(body)/2] ^= 0x10
				st.uploads[i] = protocol.Encode(up)
			}
		}
		st.mu.Unlock()
	}
}

// TestRederivedUploadCheckedAgainstWhatWasAccepted is a store edited
// while the servers run: releases are created as the dataset grows, both
// servers restart (a clean replay), then one stored upload of an old
// release is edited at both. Reading that release again sums its reports
// read back from the store (re-derived, or folded again): both servers
// refuse it (ErrUploadChanged, naming the dataset, the release and the
// report; the analyst's refusal carries ErrUploadChanged's wire code),
// never answering over the edited upload, while a release not
// over the report still answers as before. Unedited, the old release
// answers as before (the control). Quarantined at both servers (its
// upload deleted, both restarted), the report leaves the dataset as the
// package doc states: the release over it is refused
// (ErrReportSetChanged), the other answers as before, and a new release
// counts every other report.
func TestRederivedUploadCheckedAgainstWhatWasAccepted(t *testing.T) {
	for _, tc := range []struct {
		name       string
		backend    Backend
		unverified bool
	}{{"additive", Additive, false}, {"dcf", DCF, false}, {"unverified dcf", DCF, true}} {
		for _, edit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/edited=%v", tc.name, edit), func(t *testing.T) {
				testRederivedUploadChecked(t, newRestartableOf(t, tc.backend, tc.unverified), edit)
			})
		}
	}
}

// testRederivedUploadChecked is TestRederivedUploadCheckedAgainstWhatWasAccepted
// on r, the upload edited if edit.
func testRederivedUploadChecked(t *testing.T, r *restartable, edit bool) {
	var rels []payload.ReleaseID
	var answers [][]uint64
	var victim payload.ReportID
	// Three batches: the first two each closed by a release, the third
	// larger than both, so that the unverified fold sums each old
	// release from its own reports, not the aggregate less the others.
	for i, scores := range [][]float64{{0.1, 0.5}, {0.9, 0.3, 0.6}, {0.2, 0.8, 0.4, 0.7, 0.15, 0.85}} {
		ids := r.uploadVerified(t, scores...)
		if err := r.leader.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			victim = ids[1]
		}
		if i < 2 {
			rel, _, err := r.release(1)
			if err != nil {
				t.Fatal(err)
			}
			rels, answers = append(rels, rel), append(answers, r.noisyPrefixes(t, rel))
		}
	}
	r.restartBoth(t)
	if edit {
		r.editStored(t, victim)
	}
	msg := &protocol.Query{Dataset: "d", Release: rels[1], Component: payload.Count, Prefixes: []int{1, bins}}
	_, err := protocol.Call[*protocol.Answer](t.Context(), r.net.Conn("analyst"), "leader", msg)
	if !edit {
		if err != nil {
			t.Fatalf("the old release, unedited: %v", err)
		}
		if got := r.noisyPrefixes(t, rels[1]); !slices.Equal(got, answers[1]) {
			t.Fatalf("the old release, unedited: %v, want %v", got, answers[1])
		}
		return
	}
	// The whole refusal, each layer adding what it knows once: the
	// server, the release, the dataset and the read-back, the report.
	const full = `leader: release %v: dataset "d": %s: report %v: %v: its stored upload's digest is not that of the upload this server accepted (the store was edited or damaged since); it is not summed: quarantine the report at both servers`
	var wants []string
	for _, how := range []string{"re-deriving the release's 5 reports", "folding the release's 5 reports again"} {
		wants = append(wants, fmt.Sprintf(full, rels[1], how, victim, ErrUploadChanged))
	}
	if !errors.Is(err, ErrUploadChanged) || !slices.Contains(wants, err.Error()) {
		t.Fatalf("the analyst's query of the release over the edited upload:\n%v\nwant a refusal with ErrUploadChanged's code reading one of\n%s", err, strings.Join(wants, "\n"))
	}
	for _, srv := range []*Server{r.leader, r.helper} {
		s := srv.datasets["d"]
		srv.mu.Lock()
		err := srv.releaseSums(s, s.releases[rels[1]])
		srv.mu.Unlock()
		for _, want := range []string{`dataset "d"`, victim.String(), "quarantine"} {
			if !errors.Is(err, ErrUploadChanged) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v: the release over the edited upload: %v, want ErrUploadChanged naming %s", srv.cfg.Role, err, want)
			}
		}
	}
	if got := r.noisyPrefixes(t, rels[0]); !slices.Equal(got, answers[0]) {
		t.Fatalf("the release not over the edited upload: %v, want %v", got, answers[0])
	}
	r.lose(t, victim) // quarantined at both servers
	r.restartBoth(t)
	if _, err := protocol.Call[*protocol.Answer](t.Context(), r.net.Conn("analyst"), "leader", msg); err == nil || !strings.Contains(err.Error(), ErrReportSetChanged.Error()) {
		t.Fatalf("the release over the quarantined report: %v, want ErrReportSetChanged", err)
	}
	if got := r.noisyPrefixes(t, rels[0]); !slices.Equal(got, answers[0]) {
		t.Fatalf("the release not over the quarantined report: %v, want %v", got, answers[0])
	}
	if rel, n, err := r.release(1 << 48); err != nil || n != 10 || r.total(t, rel) != 10 {
		t.Fatalf("a new release: %d reports, %v; want the 10 kept", n, err)
	}
}
