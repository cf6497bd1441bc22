package analysis

import (
	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
)

// Privacy describes the release behind a result: every field is public
// configuration or post-processing of it. Its JSON keys are shared by
// every statistic (docs/json.md).
type Privacy struct {
	// Normaliser is n as the analyst knows it (ecdf.NewNormaliser): the
	// reports summed under replace-one, where n is public; under
	// add/remove a released noisy total — the Count prefix N of an ECDF,
	// P̂(N) + M̂(N) of a ROC release (JSON keys n, n_public, n_note).
	ecdf.Normaliser
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Mechanism  string  `json:"mechanism"`
	Neighbours string  `json:"neighbours"`
	Guarantee  string  `json:"guarantee"`
}

// describe returns the description of rel normalised by n, with the
// mechanism of component c.
func describe(rel *aggregation.Release, c core.Component, n ecdf.Normaliser) Privacy {
	return Privacy{
		Normaliser: n, Epsilon: rel.Epsilon(), Delta: rel.Delta(),
		Mechanism: rel.Mechanism(c).Name(), Neighbours: rel.Spec.Mechanism.Relation.String(),
		Guarantee: Guarantee(rel),
	}
}

// AllPrefixes returns 1, 2, …, n: every prefix of a grid of n bins.
func AllPrefixes(n int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = i + 1
	}
	return b
}

// lastSum is the released sum at the last queried prefix of res.
func lastSum(res *aggregation.Result) int64 { return res.Sums[len(res.Sums)-1] }

// values returns res's sums in the component's units.
func values(res *aggregation.Result) []float64 {
	v := make([]float64, len(res.Sums))
	for j := range v {
		v[j] = res.Value(j)
	}
	return v
}
