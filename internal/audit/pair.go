package audit

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Pair is a neighbouring pair of data sets (D, D′) for one payload
// component: their prefix sums differ by one record's weight, Unit
// integer units (payload.Component.Scale), on the prefixes First..Last
// and agree elsewhere.
type Pair struct {
	// Description says what D and D′ are.
	Description string `json:"description"`
	First       int    `json:"first_prefix"`
	Last        int    `json:"last_prefix"`
	Unit        int64  `json:"unit"`
	// Norm is the size of the change in the metric of the mechanism's
	// noise (NormName): for Laplace node noise, the least ℓ1 norm of an
	// integer node shift χ that explains it (the released prefixes are a
	// post-processing of the nodes, so the pair is ‖χ‖₁/b-DP, b the node
	// scale); for Gaussian noise, its Mahalanobis norm μ.
	Norm     float64 `json:"norm"`
	NormName string  `json:"norm_name"`
}

// sums returns the prefix sums of D and D′ in record units (one record
// of weight 1 counts 1).
func (p Pair) sums(n int, r mechanism.Relation) (c0, c1 []float64) {
	c0, c1 = make([]float64, n), make([]float64, n)
	for i := p.First; i <= n; i++ {
		switch {
		case r == mechanism.AddRemove: // D′ = D + the record in bin First
			c1[i-1] = 1
		case p.Last == n: // the record's weight drops from 1 to 0
			c0[i-1] = 1
		default: // the record moves from bin First to bin Last + 1
			c0[i-1] = 1
			c1[i-1] = b2f(i > p.Last)
		}
	}
	return c0, c1
}

func b2f(b bool) float64 { return float64(b2i(b)) }

// moves lists the candidate changes (first, last) of the prefix sums:
// a record of weight w ∈ {0, 1} in bin a adds w to the prefixes a..N, so
//   - add/remove: the suffixes [a, N];
//   - replace-one, count: moving a record from bin a to bin b > a
//     changes [a, b − 1], the intervals ending before N;
//   - replace-one, weighted components (label, probability): a record
//     (a, w_a) replaced by (b, w_b) changes w_b·1[i ≥ b] − w_a·1[i ≥ a];
//     every norm below is convex in the change, which is linear in
//     (w_a, w_b), so the largest is at w ∈ {0, 1}: the intervals of
//     count and the suffixes (weight 1 → 0), i.e. every interval.
func moves(n int, r mechanism.Relation, c payload.Component) [][2]int {
	var out [][2]int
	for a := 1; a <= n; a++ {
		for e := a; e <= n; e++ {
			switch {
			case r == mechanism.AddRemove && e < n:
			case r == mechanism.ReplaceOne && c == payload.Count && e == n:
			default:
				out = append(out, [2]int{a, e})
			}
		}
	}
	return out
}

// worstPair returns the move of largest norm (the first in the order of
// moves on ties), described.
func worstPair(mdl model, n int, r mechanism.Relation, c payload.Component) Pair {
	best, bestNorm := [2]int{}, -1.0
	for _, mv := range moves(n, r, c) {
		if v := mdl.norm(mv[0], mv[1]); v > bestNorm {
			best, bestNorm = mv, v
		}
	}
	p := Pair{First: best[0], Last: best[1], Unit: int64(c.Scale()), Norm: bestNorm, NormName: mdl.normName()}
	p.Description = describe(p, n, r, c)
	return p
}

// describe says what D and D′ of the pair are.
func describe(p Pair, n int, r mechanism.Relation, c payload.Component) string {
	record := map[payload.Component]string{
		payload.Count:       "one record",
		payload.Label:       "one record with label 1",
		payload.NotLabel:    "one record with label 0",
		payload.Probability: "one record with p = 1",
	}[c]
	change := fmt.Sprintf("prefixes %d–%d change by %d", p.First, p.Last, p.Unit)
	switch {
	case r == mechanism.AddRemove:
		return fmt.Sprintf("D′ = D + %s in bin %d: %s", record, p.First, change)
	case p.Last == n:
		weight := map[payload.Component]string{
			payload.Label:       "its label changes from 1 to 0",
			payload.NotLabel:    "its label changes from 0 to 1",
			payload.Probability: "its p changes from 1 to 0",
		}[c]
		return fmt.Sprintf("D has %s in bin %d; in D′ %s: %s", record, p.First, weight, change)
	}
	return fmt.Sprintf("D has %s in bin %d; in D′ it is in bin %d: %s", record, p.First, p.Last+1, change)
}

// model is the auditor's knowledge of a mechanism's released noise: the
// norm of a change of the prefixes in the noise's metric, the ε a pair of
// that norm can show, and the distinguishing statistic.
type model interface {
	normName() string
	statisticName() string
	// norm is the size of a change of prefixes first..last by one record.
	norm(first, last int) float64
	// epsilon is the ε at δ of a pair of the given norm.
	epsilon(norm, delta float64) float64
	// statistic returns a new (single-goroutine) log-likelihood ratio
	// statistic of released values y, in record units, between the
	// prefix sums c0 of D and c1 of D′: large values point to D′.
	statistic(c0, c1 []float64) func(y []float64) float64
}

// newModel returns the model of m's noise, in record units of unit
// integer units: the exact trie likelihood for Laplace node noise, the
// Gaussian linear model for cascade and gaussian-tree.
func newModel(m mechanism.Mechanism, unit float64) (model, error) {
	if gaussianNoise(m) {
		p, err := precision(m, unit)
		if err != nil {
			return nil, err
		}
		return &gaussianModel{p: p, sums: newBlockSums(p)}, nil
	}
	tr, err := newTrie(m)
	if err != nil {
		return nil, err
	}
	// The scales in record units, from the variances in record units:
	// exact when the noise is Lap_Z(b) times unit, and above b by 1/(24b)
	// when it is Lap_Z(b·unit) (a finer lattice, with a slightly larger
	// variance per unit²), which only makes the pair's ε smaller. Edge v's
	// node noise has variance NodeVariance·coef[v]² (coef 1 but for the
	// partitioned mechanism's later parts).
	l := &laplaceModel{tr: tr, b: laplaceScale(m.NodeVariance() / (unit * unit)), unit: unit,
		scales: make([]float64, len(tr.parent)), weights: make([]float64, len(tr.parent))}
	for v := 1; v < len(tr.parent); v++ {
		l.scales[v] = laplaceScale(m.NodeVariance() * tr.coef[v] * tr.coef[v] / (unit * unit))
		l.weights[v] = l.b / l.scales[v]
	}
	return l, nil
}

// gaussianNoise reports whether m's node noise is (discrete) Gaussian.
func gaussianNoise(m mechanism.Mechanism) bool {
	return m.Name() == "cascade" || m.Name() == "gaussian-tree"
}

// laplaceModel is a trie mechanism with Laplace node noise: scales[v]
// on the edge above vertex v, b the reference scale (that of a node of
// coefficient 1) and weights[v] = b/scales[v].
type laplaceModel struct {
	tr              *trie
	b, unit         float64
	scales, weights []float64
}

func (l *laplaceModel) normName() string {
	if slices.ContainsFunc(l.weights[1:], func(w float64) bool { return w != 1 }) {
		return "least node shift Σ_v |χ_v|·b/b_v (b_v the scale of node v, b the first part's)"
	}
	return "least node shift ‖χ‖₁"
}

func (l *laplaceModel) statisticName() string {
	const name = "log-likelihood ratio of the released prefixes (sum-product over the latent tree nodes"
	if h, _ := l.tr.grid(l.scales, l.unit); h > 1/l.unit {
		return fmt.Sprintf("%s, on a grid of %.3g records = b/%.3g)", name, h, l.b/h)
	}
	return "exact " + name + ")"
}

func (l *laplaceModel) norm(first, last int) float64 { return l.tr.minShift(first, last, l.weights) }

// epsilon is Σ_v |χ_v|/b_v = norm/b: shifting the node noise by χ
// changes its density by at most e to that (pure DP, whatever δ).
func (l *laplaceModel) epsilon(norm, _ float64) float64 { return norm / l.b }

func (l *laplaceModel) statistic(c0, c1 []float64) func(y []float64) float64 {
	lik := newLaplaceLikelihood(l.tr, l.scales, l.unit)
	x := make([]float64, len(c0))
	return func(y []float64) float64 {
		for i := range x {
			x[i] = y[i] - c1[i]
		}
		l1 := lik.logLikelihood(x)
		for i := range x {
			x[i] = y[i] - c0[i]
		}
		return finiteDifference(l1, lik.logLikelihood(x))
	}
}

// finiteDifference returns a − b for log-likelihoods, kept finite: ±1e300
// when one is −∞, 0 when both are.
func finiteDifference(a, b float64) float64 {
	const huge = 1e300
	switch {
	case a == b:
		return 0
	case b < -huge:
		return huge
	case a < -huge:
		return -huge
	}
	return a - b
}

// gaussianModel is a mechanism with Gaussian prefix noise of precision P.
type gaussianModel struct {
	p    *mat.SymDense
	sums blockSums
}

func (g *gaussianModel) normName() string { return "Mahalanobis norm μ" }

func (g *gaussianModel) statisticName() string {
	return "linear statistic ⟨Σ⁻¹(c′ − c), y⟩ (the log-likelihood ratio of Gaussian noise of covariance Σ)"
}

func (g *gaussianModel) norm(first, last int) float64 { return g.sums.mahalanobis(first, last) }

func (g *gaussianModel) epsilon(norm, delta float64) float64 { return gaussianEpsilon(norm, delta) }

// statistic is log N(y; c1, Σ) − log N(y; c0, Σ) = wᵀy − (c1ᵀPc1 −
// c0ᵀPc0)/2 with w = P(c1 − c0).
func (g *gaussianModel) statistic(c0, c1 []float64) func(y []float64) float64 {
	n := len(c0)
	var w, p0, p1 mat.VecDense
	diff := mat.NewVecDense(n, nil)
	diff.SubVec(mat.NewVecDense(n, c1), mat.NewVecDense(n, c0))
	w.MulVec(g.p, diff)
	p0.MulVec(g.p, mat.NewVecDense(n, c0))
	p1.MulVec(g.p, mat.NewVecDense(n, c1))
	offset := (mat.Dot(&p1, mat.NewVecDense(n, c1)) - mat.Dot(&p0, mat.NewVecDense(n, c0))) / 2
	weights := w.RawVector().Data
	return func(y []float64) float64 { return dot(weights, y) - offset }
}
