package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
)

// binFold is a Prepare that sketches each report as its upload and
// folds the reports' one-hot bin vectors (the bin is upload[0] mod 4):
// four little-endian counts, the shape of a release's sum.
func binFold(ids []payload.ReportID, uploads [][]byte) ([][]byte, []byte, error) {
	counts := make([]uint64, 4)
	for _, u := range uploads {
		counts[u[0]%4]++
	}
	fold := make([]byte, 0, 32)
	for _, c := range counts {
		fold = binary.LittleEndian.AppendUint64(fold, c)
	}
	return slices.Clone(uploads), fold, nil
}

// sumBins is the sum of binFold's folds.
func sumBins(folds [][]byte) []uint64 {
	sum := make([]uint64, 4)
	for _, f := range folds {
		for b := range sum {
			sum[b] += binary.LittleEndian.Uint64(f[8*b:])
		}
	}
	return sum
}

// prepareAll prepares dataset d's queued reports in batches of batch
// and returns how many it prepared.
func prepareAll(t *testing.T, p *Postgres, batch int) int {
	t.Helper()
	return prepareWith(t, p, batch, binFold)
}

// prepareWith is prepareAll with prepare, as one process's preparation
// loop runs it until the queue is empty.
func prepareWith(t testing.TB, p *Postgres, batch int, prepare Prepare) int {
	t.Helper()
	total := 0
	for {
		n, err := p.PrepareNext("d", batch, prepare)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// TestDeletedReportLeavesItsFold is the adversary of verification
// spread over processes: a party's report is recorded and folded, then
// deleted (an orphan purge, a quarantine, a rejection: all go through
// DeleteReports) and recorded again under the same ID with another bin.
// The folds Folds returns must sum exactly the current uploads of the
// reports it says they hold (a release sums them and re-derives only
// the others), the re-recorded report must be prepared again from its
// new upload, and only the batch that held the deleted report is
// prepared again, once, so that the folds hold every report again.
func TestDeletedReportLeavesItsFold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rerecord   bool
		quarantine bool
	}{{"purged", false, false}, {"purged and recorded again", true, false}, {"quarantined", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.Schema(t)
			p := openShared(t, dsn)
			uploads := map[payload.ReportID][]byte{}
			for i := range 12 {
				uploads[wideID(i)] = []byte{byte(i), byte(i)}
				if err := p.PutReport("d", wideID(i), uploads[wideID(i)]); err != nil {
					t.Fatal(err)
				}
			}
			prepareAll(t, p, 4) // folds {0..3}, {4..7}, {8..11}
			del := p.DeleteReports
			if tc.quarantine {
				del = func(dataset string, ids []payload.ReportID) (int, error) {
					p.Close() // quarantine needs the store stopped
					defer func() { p = openShared(t, dsn) }()
					return QuarantinePostgres(dsn, "", dataset, ids)
				}
			}
			if n, err := del("d", []payload.ReportID{wideID(5)}); err != nil || n != 1 {
				t.Fatalf("deleting the report: %d, %v", n, err)
			}
			delete(uploads, wideID(5))
			if tc.rerecord {
				uploads[wideID(5)] = []byte{6, 5} // bin 2, was bin 1
				if err := p.PutReport("d", wideID(5), uploads[wideID(5)]); err != nil {
					t.Fatal(err)
				}
			}
			again := prepareAll(t, p, 4)
			if want := 3 + len(uploads) - 11; again != want {
				t.Errorf("%d reports prepared after the deletion, want %d (the deleted report's batch, and the report recorded again)", again, want)
			}
			folds, folded, err := p.Folds("d")
			if err != nil {
				t.Fatal(err)
			}
			got, want := sumBins(folds), make([]uint64, 4)
			for id, digest := range folded {
				u, ok := uploads[id]
				if !ok {
					t.Fatalf("report %v among the folded reports, but deleted", id)
				}
				if digest != sha256.Sum256(u) {
					t.Fatalf("report %v folded with the digest %x, not its upload's", id, digest)
				}
				want[u[0]%4]++
			}
			if !slices.Equal(got, want) {
				t.Errorf("the folds sum the bins %v; the uploads of the %d reports they hold, %v", got, len(folded), want)
			}
			if len(folded) != len(uploads) {
				t.Errorf("the folds hold %d reports, want every one stored, %d", len(folded), len(uploads))
			}
			if tc.rerecord {
				sk, digests, err := p.Sketches("d", []payload.ReportID{wideID(5)})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(sk[wideID(5)], uploads[wideID(5)]) || digests[wideID(5)] != sha256.Sum256(uploads[wideID(5)]) {
					t.Errorf("the re-recorded report's sketch is %v, of the upload of digest %x; want its new upload's %v, %x", sk[wideID(5)], digests[wideID(5)], uploads[wideID(5)], sha256.Sum256(uploads[wideID(5)]))
				}
			}
		})
	}
}

// TestDeletionsWhilePreparing: reports deleted and recorded again with
// other content while two processes prepare leave, once the queue is
// empty, folds that hold every stored report exactly once and sum their
// current uploads.
func TestDeletionsWhilePreparing(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, b := openShared(t, dsn), openShared(t, dsn)
	const n = 200
	uploads := map[payload.ReportID][]byte{}
	for i := range n {
		uploads[wideID(i)] = []byte{byte(i), byte(i)}
		if err := a.PutReport("d", wideID(i), uploads[wideID(i)]); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	errs := make(chan error, 2)
	for _, p := range []*Postgres{a, b} {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := p.PrepareNext("d", 8, binFold); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < n; i += 7 {
		id := wideID(i)
		if _, err := b.DeleteReports("d", []payload.ReportID{id}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			uploads[id] = []byte{byte(i + 1), byte(i)}
			if err := a.PutReport("d", id, uploads[id]); err != nil {
				t.Fatal(err)
			}
		} else {
			delete(uploads, id)
		}
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	prepareAll(t, a, 8)
	folds, folded, err := b.Folds("d")
	if err != nil {
		t.Fatal(err)
	}
	got, want := sumBins(folds), make([]uint64, 4)
	for id := range folded {
		u, ok := uploads[id]
		if !ok {
			t.Fatalf("report %v folded, but deleted", id)
		}
		want[u[0]%4]++
	}
	if len(folded) != len(uploads) || !slices.Equal(got, want) {
		t.Errorf("the folds hold %d of %d stored reports and sum the bins %v; their uploads %v", len(folded), len(uploads), got, want)
	}
}
