package bench

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// AlphaError is the α-mRMSE (counting-on-trees Definition 1.4) of one
// mechanism at one α: the largest over the nodes of the mechanism's own
// tree of the α-mRMSE of the node's range count (the difference of two
// released prefixes), and the largest over the prefixes of that of the
// prefix sum, on the data of the row (AccuracyRow.AlphaData). At α = 0 both are
// exact (√ of the largest exact variance: the noise is linear in node
// noises of known variance); at α > 0 they are Monte-Carlo estimates over
// the row's releases (the law of a sum of node noises has no closed form),
// the largest of per-node estimates, biased upwards by the maximum; so is
// the node value at α = 0 of a mechanism whose rounding the Terms omit
// (cascade).
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
	type span struct {
		lo, hi int // noise is PrefixNoise(hi) − PrefixNoise(lo), PrefixNoise(0) = 0
		truth  float64
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
	variance := func(s span) float64 { return hierarchy.RangeVariance(m, s.lo, s.hi) }
	estimates := func(set []span) [][]float64 {
		e := make([][]float64, len(set))
		for k := range e {
			e[k] = make([]float64, 0, runs)
		}
		return e
	}
	nodeEst, prefixEst := estimates(nodes), estimates(prefixes)
	for range runs {
		var seed [32]byte
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(seed[j:], rng.Uint64())
		}
		rel := m.NewRelease(seed)
		noiseAt := func(i int) float64 {
			if i == 0 {
				return 0
			}
			return float64(rel.PrefixNoise(i))
		}
		for k, s := range nodes {
			nodeEst[k] = append(nodeEst[k], s.truth+noiseAt(s.hi)-noiseAt(s.lo))
		}
		for k, s := range prefixes {
			prefixEst[k] = append(prefixEst[k], s.truth+noiseAt(s.hi))
		}
	}
	worst := func(n int, f func(k int) float64) float64 {
		w := 0.0
		for k := range n {
			w = max(w, f(k))
		}
		return w
	}
	// The Terms describe the noise exactly when they give every prefix
	// its PrefixVariance (not so for cascade, whose rounding they omit):
	// then a node's variance is exact too, else it is measured.
	linear := true
	for _, s := range prefixes {
		v := m.PrefixVariance(s.hi)
		linear = linear && math.Abs(variance(s)-v) <= 1e-9*v
	}
	out := make([]AlphaError, len(alphas))
	for a, alpha := range alphas {
		e := AlphaError{Alpha: alpha, NodeExact: alpha == 0 && linear, PrefixExact: alpha == 0}
		e.Node = worst(len(nodes), func(k int) float64 { return hierarchy.MRMSE(alpha, nodes[k].truth, nodeEst[k]) })
		e.Prefix = worst(len(prefixes), func(k int) float64 { return hierarchy.MRMSE(alpha, prefixes[k].truth, prefixEst[k]) })
		if e.NodeExact {
			e.Node = math.Sqrt(worst(len(nodes), func(k int) float64 { return variance(nodes[k]) }))
		}
		if e.PrefixExact {
			e.Prefix = math.Sqrt(worst(len(prefixes), func(k int) float64 { return m.PrefixVariance(prefixes[k].hi) }))
		}
		e.NodeSRE = worst(len(nodes), func(k int) float64 {
			return hierarchy.SmoothedRelativeError(tau, nodes[k].truth, nodeEst[k])
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
