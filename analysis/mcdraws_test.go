package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// noiseDraws gives, value for value, the vectors the intervals drew
// before the cache (monteCarlo with the samplers' draw in order, one
// vector each per draw); a second call with the same law returns the
// cached set, another law, salt or prefix list its own, and a set above
// maxCachedDrawValues is drawn afresh.
func TestNoiseDrawsCached(t *testing.T) {
	const draws, bins = 40, 32
	rel := testRelease(t, []core.Component{core.Label, core.NotLabel}, bins, 500, 1)
	ps := newNoiseSampler(rel, core.Label, AllPrefixes(bins))
	ms := newNoiseSampler(rel, core.NotLabel, AllPrefixes(bins))
	want := make([][][]float64, draws)
	monteCarlo(draws, 3, func(rng *rand.Rand, b int) float64 {
		want[b] = [][]float64{make([]float64, bins), make([]float64, bins)}
		ps.draw(rng, want[b][0])
		ms.draw(rng, want[b][1])
		return 0
	})
	got := noiseDraws(draws, 3, ps, ms)
	if !slices.EqualFunc(got, want, func(a, b [][]float64) bool { return slices.Equal(a[0], b[0]) && slices.Equal(a[1], b[1]) }) {
		t.Fatal("cached draws differ from monteCarlo's")
	}
	if again := noiseDraws(draws, 3, ps, ms); &again[0][0][0] != &got[0][0][0] {
		t.Error("the same law drew again: not cached")
	}
	other := testRelease(t, []core.Component{core.Label, core.NotLabel}, bins, 500, 2)
	for name, v := range map[string][][][]float64{
		"other salt":     noiseDraws(draws, 4, ps, ms),
		"other ε":        noiseDraws(draws, 3, newNoiseSampler(other, core.Label, AllPrefixes(bins)), ms),
		"other prefixes": noiseDraws(draws, 3, newNoiseSampler(rel, core.Label, AllPrefixes(bins)[1:]), ms),
	} {
		if slices.Equal(v[0][0], got[0][0]) {
			t.Errorf("%s: the first vector is the cached set's", name)
		}
	}
	if v := noiseDraws(draws, 3, ps); len(v[0]) != 1 || &v[0][0][0] == &got[0][0][0] {
		t.Error("one sampler: want its own set")
	}
	long := newNoiseSampler(rel, core.Label, make([]int, maxCachedDrawValues/2+1))
	for j := range long.prefixes {
		long.prefixes[j] = 1 + j%bins
	}
	a, b := noiseDraws(2, 5, long), noiseDraws(2, 5, long)
	if &a[0][0][0] == &b[0][0][0] || !slices.Equal(a[1][0], b[1][0]) {
		t.Error("a set above maxCachedDrawValues: want drawn afresh, equal")
	}
}

// BenchmarkIntervals is the intervals of one data set of n = 300 on the
// coverage grid's 256 bins (auto, ε = 1, two servers, B =
// DefaultIntervalDraws): an ECDF (band and quantile intervals) and a ROC
// (box, bootstrap, band). "redrawn" empties the draws cache before each
// data set, which is what every data set cost before it (each interval
// drew its B noise vectors afresh); "cached" keeps it, as a run of one
// noise law does. Their ns/op ratio is the cache's speed-up.
func BenchmarkIntervals(b *testing.B) {
	const bins, n = 256, 300
	g, err := ecdf.NewLinearGrid(-3, 3, bins)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 25))
	count := prefixSums(n, bins, 0, rng)
	pos, neg := prefixSums(n*3/10, bins, 1.2, rng), prefixSums(n*7/10, bins, 0, rng)
	release := func(comps ...core.Component) *aggregation.Release {
		rel, err := aggregation.NewRelease(payload.ReleaseID{}, aggregation.ReleaseSpec{
			Mechanism:  mechanism.Params{Name: "auto", Bins: bins, Epsilon: 1, Relation: mechanism.ReplaceOne},
			Components: comps,
		}, n, 2)
		if err != nil {
			b.Fatal(err)
		}
		return rel
	}
	er, rr := release(core.Count), release(core.Label, core.NotLabel)
	ecdfRes, posRes, negRes := noisyResult(er, core.Count, count, rng), noisyResult(rr, core.Label, pos, rng), noisyResult(rr, core.NotLabel, neg, rng)
	for _, redraw := range []bool{true, false} {
		b.Run(map[bool]string{true: "redrawn", false: "cached"}[redraw], func(b *testing.B) {
			for b.Loop() {
				if redraw {
					drawCache.Lock()
					drawCache.sets, drawCache.order, drawCache.size = map[string]*drawSet{}, nil, 0
					drawCache.Unlock()
				}
				e, err := NewECDF(ecdfRes, g, DefaultIntervalDraws)
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Smooth(DefaultSmoothing, []float64{0.5}); err != nil {
					b.Fatal(err)
				}
				if _, err := NewROC(posRes, negRes, DefaultSmoothing, DefaultIntervalDraws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
