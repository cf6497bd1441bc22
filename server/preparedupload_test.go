package server

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/party"
)

// TestFoldedThenAcceptedUploadChecked is the store edited between a
// report's preparation and its verification: a report prepared and
// folded by both roles' processes (of bin 2), its stored upload then
// replaced at the leader, the helper or both by another valid one under
// the same ID (of bin 13), and the servers restarted from their stores
// (so that the server verifies the edited upload) before verifying it.
// A release is then refused — ErrUploadChanged naming the dataset (once),
// the report and the remedy, the report neither accepted nor rejected —
// never answered; unedited, it answers exactly the prefix counts of a
// full re-derivation: a pair without preparations given the uploads the
// servers hold (those their acceptance records keep). Verified from the
// sketch of the other upload, the report's acceptance would keep the
// digest of the edited upload while the release summed the folded one's
// output. Refused, the report is then quarantined at both servers (its
// upload deleted, its preparation and the fold holding it with it, as
// the PostgreSQL store's trigger does) and both restarted: a release
// succeeds and answers exactly the prefix counts of a full
// re-derivation of the three remaining uploads; a mutant quarantine
// that leaves the report's output in its fold must not. Unedited (the
// control), the release counts the report.
func TestFoldedThenAcceptedUploadChecked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edited   []int // the servers (0 leader, 1 helper) whose stored upload is replaced
		keepFold bool  // a mutant quarantine, which leaves the report's output in its fold
	}{
		{"none", nil, false}, {"leader", []int{0}, false}, {"helper", []int{1}, false}, {"both", []int{0, 1}, false},
		{"both/mutant quarantine", []int{0, 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, preps := newPreparedPair(t)
			p.uploadVerified(t, 0.1, 0.5, 0.9)
			id, folded, other := twoUploadsOfOneReport(t)
			if err := party.Upload(context.Background(), p.servers, party.Report{ID: id, Shares: folded.Shares}); err != nil {
				t.Fatal(err)
			}
			preps[0].work(t, 4)
			preps[1].work(t, 4)
			held := folded.Shares
			for _, i := range tc.edited {
				held[i] = other.Shares[i]
				preps[i].reports["d"][id] = protocol.Encode(&protocol.Upload{Dataset: "d", Report: id, Share: held[i]})
			}
			p = restartPrepared(t, &preps)
			rel, n, err := p.release(1 << 48)
			quarantined := err != nil
			if len(tc.edited) > 0 && !quarantined {
				t.Fatalf("the release over the edited upload was answered (%d reports), not refused", n)
			}
			if quarantined {
				checkUploadChangedRefusal(t, p, id, len(tc.edited) > 0, err)
				for _, prep := range preps {
					prep.quarantine(t, id, tc.keepFold)
				}
				p = restartPrepared(t, &preps)
				if rel, n, err = p.release(1 << 48); err != nil && !tc.keepFold {
					t.Fatalf("the release after the report was quarantined at both servers: %v", err)
				}
			}
			local := newVerifiedPair(t, DCF)
			local.uploadVerified(t, 0.1, 0.5, 0.9)
			if !quarantined {
				if err := party.Upload(context.Background(), local.servers, party.Report{ID: id, Shares: held}); err != nil {
					t.Fatal(err)
				}
			}
			lrel, ln, lerr := local.release(1 << 48)
			if lerr != nil {
				t.Fatal(lerr)
			}
			want := local.prefixCounts(t, lrel)
			if tc.keepFold {
				if err == nil && n == ln && slices.Equal(p.prefixCounts(t, rel), want) {
					t.Errorf("the mutant quarantine, the report's output left in its fold, released the re-derivation's counts %v", want)
				}
				return
			}
			if got := p.prefixCounts(t, rel); n != ln || !slices.Equal(got, want) {
				t.Errorf("the release over %d reports counts %v; a full re-derivation of the uploads held, %d reports, %v", n, got, ln, want)
			}
			if wantN := map[bool]int{false: 4, true: 3}[quarantined]; n != wantN {
				t.Errorf("the release is over %d reports, want %d", n, wantN)
			}
		})
	}
}

// checkUploadChangedRefusal checks the release's refusal err: allowed
// only if the report id's upload was edited, with ErrUploadChanged
// naming the dataset (once), the report and the remedy, the report
// decided at neither server.
func checkUploadChangedRefusal(t *testing.T, p *pair, id payload.ReportID, edited bool, err error) {
	t.Helper()
	for _, want := range []string{`dataset "d"`, id.String(), "quarantine"} {
		if !edited || !errors.Is(err, ErrUploadChanged) || !strings.Contains(err.Error(), want) {
			t.Fatalf("the release: %v; want a success, or a refusal with ErrUploadChanged naming %s", err, want)
		}
	}
	if n := strings.Count(err.Error(), `dataset "d"`); n != 1 {
		t.Errorf("the refusal names the dataset %d times, want once: %v", n, err)
	}
	for _, srv := range []*Server{p.leader, p.helper} {
		if _, decided := srv.datasets["d"].verified.verdict(id); decided {
			t.Errorf("the %s decided the report whose upload was edited", srv.cfg.Role)
		}
	}
}

// twoUploadsOfOneReport returns a report ID and two valid verified DCF
// reports under it, of bins 2 and 13, that differ only in their keys
// (the same seeds: each server's correlated values are the same).
func twoUploadsOfOneReport(t *testing.T) (payload.ReportID, vdcf.Report, vdcf.Report) {
	t.Helper()
	s, err := vdcf.New(bins)
	if err != nil {
		t.Fatal(err)
	}
	id, err := payload.NewID()
	if err != nil {
		t.Fatal(err)
	}
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		t.Fatal(err)
	}
	var r [2]vdcf.Report
	for i, bin := range []int{2, 13} {
		if r[i], err = s.EncodeAt(id, bin, true, rand.NewChaCha8(seed)); err != nil {
			t.Fatal(err)
		}
	}
	return id, r[0], r[1]
}

// BenchmarkPreparedUploadCheck measures what checking a prepared report's
// upload against the digest its preparation recorded (preparedUpload)
// adds to the coordinator's verification of it from its sketch:
// "check" is the SHA-256 of the upload's encoding, "resketch" the
// leader's first step from the sketch (resketch: decoding the share,
// vdcf.Server.Resketch), both per report of a probability-carrying
// scheme (a deployment's); their ratio is the check's share of that
// step.
func BenchmarkPreparedUploadCheck(b *testing.B) {
	for _, nbins := range []int{16, 1024} {
		v, err := newVDCF(nbins, true, Leader, testVerifyKey)
		if err != nil {
			b.Fatal(err)
		}
		s, _ := vdcf.NewWithProbability(nbins)
		ups := make([]*protocol.Upload, 64)
		ids, encoded := make([]payload.ReportID, len(ups)), make([][]byte, len(ups))
		for k := range ups {
			r, err := s.EncodeProbability(k%nbins, k%2 == 0, uint64(k)<<20, crand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			ups[k] = &protocol.Upload{Dataset: "d", Report: r.Nonce, Share: r.Shares[0]}
			ids[k], encoded[k] = r.Nonce, protocol.Encode(ups[k])
		}
		sketches, _, err := (&Preparer{v: v}).Prepare(ids, encoded)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("check/bins=%d", nbins), func(b *testing.B) {
			for b.Loop() {
				for _, up := range ups {
					sha256.Sum256(protocol.Encode(up))
				}
			}
			b.ReportMetric(float64(len(encoded[0])), "upload-B")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ups)), "ns/report")
		})
		b.Run(fmt.Sprintf("resketch/bins=%d", nbins), func(b *testing.B) {
			for b.Loop() {
				for _, st := range v.resketch(ups, sketches) {
					if st.err != nil {
						b.Fatal(st.err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ups)), "ns/report")
		})
	}
}
