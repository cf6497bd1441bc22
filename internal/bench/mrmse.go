package bench

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// AlphaError is the α-mRMSE (counting-on-trees Definition 1.4) of one
// mechanism at one α: the largest over the nodes of the mechanism's own
// tree of the α-mRMSE of the node's range count (the difference of two
// released prefixes), and the largest over the prefixes of that of the
// prefix sum, on the data of the row (AccuracyRow.AlphaData). At α = 0
// both are exact (√ of the largest exact variance: the noise is linear in
// node noises of known variance), except cascade's nodes, whose rounding
// the Terms omit. Otherwise they are Monte-Carlo estimates that pool the
// row's releases over all the spans whose noise has the same law
// (lawKey; for cascade approximately): each span's expectation is
// taken over many draws, so the maximum over the spans is hardly biased;
// and, the Terms being exact, each is capped at its span's exact mean
// square error (α-mRMSE ≤ RMSE), which the rarest laws (the root's) would
// otherwise overshoot from their few draws.
type AlphaError struct {
	Alpha       float64 `json:"alpha"`
	Node        float64 `json:"node_mrmse"`
	NodeExact   bool    `json:"node_exact"`
	Prefix      float64 `json:"prefix_mrmse"`
	PrefixExact bool    `json:"prefix_exact"`
	// NodeSRE is the largest over the nodes of the Monte-Carlo smoothed
	// relative error E|y′ − y|/max(y, τ) (Appendix B), τ = AccuracyRow.Tau;
	// NodeSREBound its Lemma B.1 bound α + Node/τ.
	NodeSRE      float64 `json:"node_smoothed_relative_error"`
	NodeSREBound float64 `json:"node_smoothed_relative_bound"`
}

// smoothingFactor is τ of the smoothed relative error for n records:
// 0.1 % of n (the choice of the evaluations Appendix B cites), at least 1.
func smoothingFactor(n int64) float64 { return max(1, 0.001*float64(n)) }

// alphaErrors measures the α-mRMSE of m on hist at every α of alphas over
// runs releases drawn from rng, evaluating at most maxEval nodes and
// prefixes (a uniform sample, the same for every release, when there
// are more).
func alphaErrors(m mechanism.Mechanism, hist []int64, alphas []float64, runs, maxEval int, rng *rand.Rand) ([]AlphaError, float64, error) {
	t, err := hierarchy.NewTree(m.Bins(), hierarchy.ArityOf(m))
	if err != nil {
		return nil, 0, err
	}
	counts, err := t.Counts(hist)
	if err != nil {
		return nil, 0, err
	}
	prefix := make([]int64, len(hist)+1)
	for i, c := range hist {
		prefix[i+1] = prefix[i] + c
	}
	var nodes, prefixes []span
	for l := range t.Depth() {
		for j := range t.LevelNodes(l) {
			lo, hi := t.Range(l, j)
			nodes = append(nodes, span{lo, hi, float64(counts[l][j])})
		}
	}
	for i := 1; i <= m.Bins(); i++ {
		prefixes = append(prefixes, span{0, i, float64(prefix[i])})
	}
	nodes, prefixes = sampleSpans(nodes, maxEval, rng), sampleSpans(prefixes, maxEval, rng)
	tau := smoothingFactor(prefix[len(hist)])
	exact := termsExact(m, prefixes)
	all := append(slices.Clone(nodes), prefixes...)
	keys := make([]string, len(all))
	for k, s := range all {
		keys[k] = lawKey(m, s, exact)
	}
	laws := pooledLaws(m, all, keys, runs, rng)
	nodeLaw := func(k int) *law { return laws[keys[k]] }
	prefixLaw := func(k int) *law { return laws[keys[len(nodes)+k]] }
	worst := func(n int, f func(k int) float64) float64 {
		w := 0.0
		for k := range n {
			w = max(w, f(k))
		}
		return w
	}
	out := make([]AlphaError, len(alphas))
	for a, alpha := range alphas {
		e := AlphaError{Alpha: alpha, NodeExact: alpha == 0 && exact, PrefixExact: alpha == 0}
		e.Node = math.Sqrt(worst(len(nodes), func(k int) float64 {
			return capped(nodeLaw(k).mse(alpha*nodes[k].truth), exact, hierarchy.RangeVariance(m, nodes[k].lo, nodes[k].hi))
		}))
		e.Prefix = math.Sqrt(worst(len(prefixes), func(k int) float64 {
			return capped(prefixLaw(k).mse(alpha*prefixes[k].truth), exact, m.PrefixVariance(prefixes[k].hi))
		}))
		if e.NodeExact {
			e.Node = math.Sqrt(worst(len(nodes), func(k int) float64 { return hierarchy.RangeVariance(m, nodes[k].lo, nodes[k].hi) }))
		}
		if e.PrefixExact {
			e.Prefix = math.Sqrt(worst(len(prefixes), func(k int) float64 { return m.PrefixVariance(prefixes[k].hi) }))
		}
		e.NodeSRE = worst(len(nodes), func(k int) float64 {
			abs := math.Sqrt(capped(nodeLaw(k).meanAbs*nodeLaw(k).meanAbs, exact, hierarchy.RangeVariance(m, nodes[k].lo, nodes[k].hi)))
			return abs / max(nodes[k].truth, tau) // E|η| ≤ √E[η²], capped likewise
		})
		e.NodeSREBound = hierarchy.SmoothedBound(alpha, tau, e.Node)
		out[a] = e
	}
	return out, tau, nil
}

// sampleSpans returns set, or max uniform draws from it (with
// replacement) when it is longer.
func sampleSpans[S any](set []S, maxEval int, rng *rand.Rand) []S {
	if maxEval <= 0 || len(set) <= maxEval {
		return set
	}
	out := make([]S, maxEval)
	for k := range out {
		out[k] = set[rng.IntN(len(set))]
	}
	return out
}
