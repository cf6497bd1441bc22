package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/core"
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
