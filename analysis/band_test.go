package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestBandEnds checks bandEnds on raw bands that lie beyond [0, 1] or
// that no non-decreasing curve fits: each end stays in [0, 1], both are
// non-decreasing, every interval keeps positive width, and the band
// holds what the raw band's part in [0, 1] held.
func TestBandEnds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		raw, h    []float64
		lo, hi    []float64 // want
		wantOuter bool
	}{
		{name: "inside", raw: []float64{0.2, 0.5, 0.8}, h: []float64{0.1, 0.1, 0.1}, lo: []float64{0.1, 0.4, 0.7}, hi: []float64{0.3, 0.6, 0.9}},
		{name: "far above 1", raw: []float64{0.2, 5, 0.9}, h: []float64{0.1, 0.1, 0.1}, lo: []float64{0.1, 0.8, 0.8}, hi: []float64{0.3, 1, 1}, wantOuter: true},
		{name: "far below 0", raw: []float64{-7, -6, 0.5}, h: []float64{0.2, 0.2, 0.2}, lo: []float64{0, 0, 0.3}, hi: []float64{0.4, 0.4, 0.7}},
		{name: "clipped, not moved", raw: []float64{-0.05, 1.05}, h: []float64{0.1, 0.1}, lo: []float64{0, 0.95}, hi: []float64{0.05, 1}},
		{name: "no noise", raw: []float64{0, 1}, h: []float64{0, 0}, lo: []float64{0, 1}, hi: []float64{0, 1}},
		{name: "crossing", raw: []float64{0.9, 0.1}, h: []float64{0.05, 0.05}, lo: []float64{0.05, 0.05}, hi: []float64{0.95, 0.95}, wantOuter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := bandEnds(tc.raw, tc.h)
			for j := range lo {
				if !near(lo[j], tc.lo[j]) || !near(hi[j], tc.hi[j]) {
					t.Errorf("band %v, %v; want %v, %v", lo, hi, tc.lo, tc.hi)
					break
				}
			}
			checkBandShape(t, lo, hi, tc.h)
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// checkBandShape fails unless 0 ≤ lo ≤ hi ≤ 1 with lo < hi where h (a
// half-width or a variance of the noise) is positive,
// and both ends are non-decreasing.
func checkBandShape(t *testing.T, lo, hi, h []float64) {
	t.Helper()
	for j := range lo {
		if !(0 <= lo[j] && lo[j] <= hi[j] && hi[j] <= 1) || (h[j] > 0 && !(lo[j] < hi[j])) {
			t.Fatalf("band at %d: [%v, %v] (noise scale %v): want 0 ≤ lo < hi ≤ 1", j, lo[j], hi[j], h[j])
		}
		if j > 0 && (lo[j] < lo[j-1] || hi[j] < hi[j-1]) {
			t.Fatalf("band at %d: [%v, %v] after [%v, %v]: want non-decreasing ends", j, lo[j], hi[j], lo[j-1], hi[j-1])
		}
	}
}

// TestBandNeverAPoint releases the ECDF of n = 100 values at ε = 10⁻³,
// 0.1 and 1 under both relations with two servers (mechanism auto):
// wherever the noise s.d. is positive the band must be an interval of
// positive width inside [0, 1]. Before bandEnds, a noisy F̂ beyond
// [0, 1] by more than the band's half-width clipped the band there to a
// point (about 3 % of such releases).
func TestBandNeverAPoint(t *testing.T) {
	const n, bins, trials, draws = 100, 64, 60, 100
	g, err := ecdf.NewLinearGrid(-3, 3, bins)
	if err != nil {
		t.Fatal(err)
	}
	for _, rl := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
		for _, eps := range []float64{1e-3, 0.1, 1} {
			t.Run(fmt.Sprintf("%v/eps=%g", rl, eps), func(t *testing.T) {
				rel, err := aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
					Mechanism:  mechanism.Params{Name: "auto", Bins: bins, Epsilon: eps, Relation: rl},
					Components: []core.Component{core.Count},
				}, n, 2)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(25, uint64(eps*1e3)))
				for range trials {
					res := noisyResult(rel, core.Count, prefixSums(n, bins, 0, rng), rng)
					e, err := NewECDF(res, g, draws)
					if err != nil {
						t.Fatal(err)
					}
					h := make([]float64, bins)
					for j := range h {
						h[j] = res.Variance(j)
					}
					checkBandShape(t, e.Band95.Lower, e.Band95.Upper, h)
				}
			})
		}
	}
}

// TestBandCriticalValueHolds checks the ECDF band's critical value c of
// a 256-bin release of n = 10⁴ under replace-one with two servers
// (mechanism auto), from DefaultIntervalDraws draws of the fixed public
// seed: over m fresh noise vectors of the release's law, max_i |η_i|/sd_i
// ≤ c — the band holding the truth — in at least 0.95 − 2 s.e.
// (binomial s.e. of m draws, 0.004). Read at the plain ⌈0.95·B⌉-th order
// statistic, the seed's draws gave 0.935 (ε = 0.1) and 0.939 (ε = 1).
func TestBandCriticalValueHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("3000 fresh noise vectors per ε")
	}
	const bins, n, m = 256, 10000, 3000
	for _, eps := range []float64{0.1, 1} {
		t.Run(fmt.Sprintf("eps=%g", eps), func(t *testing.T) {
			rel, err := aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
				Mechanism:  mechanism.Params{Name: "auto", Bins: bins, Epsilon: eps, Relation: mechanism.ReplaceOne},
				Components: []core.Component{core.Count},
			}, n, 2)
			if err != nil {
				t.Fatal(err)
			}
			prefixes := AllPrefixes(bins)
			s := newNoiseSampler(rel, core.Count, prefixes)
			sd := make([]float64, bins)
			for j, i := range prefixes {
				sd[j] = math.Sqrt(rel.RangeVariance(core.Count, 0, i))
			}
			c := criticalValue(DefaultIntervalDraws, 1, sd, 0.95, s.draw)
			rng := rand.New(rand.NewPCG(9, 9))
			eta := make([]float64, bins)
			var in int
			for range m {
				s.draw(rng, eta)
				var worst float64
				for j := range eta {
					worst = max(worst, math.Abs(eta[j])/sd[j])
				}
				if worst <= c {
					in++
				}
			}
			se := math.Sqrt(0.05 * 0.95 / m)
			t.Logf("c = %.4f holds the noise in %d of %d fresh draws", c, in, m)
			if got := float64(in) / m; got < 0.95-2*se {
				t.Errorf("the critical value holds %.4f of fresh noise, want ≥ %.4f", got, 0.95-2*se)
			}
		})
	}
}
