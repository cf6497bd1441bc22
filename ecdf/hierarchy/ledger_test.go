package hierarchy

import (
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// shiftDivergence is the exact hockey-stick divergence at e^eps between
// the laws of y + X and y + 1 + X (both directions), X ~ TLap_Z(t, A) of
// d: the worst event's Σ_o max(P(o) − e^eps·P′(o), 0) for one unit change.
func shiftDivergence(d truncatedLaplace, eps float64) float64 {
	p := tlapPMF(d)
	at := func(k int) float64 {
		if k < 0 || k >= len(p) {
			return 0
		}
		return p[k]
	}
	s1, s2 := 0.0, 0.0
	for k := -1; k <= len(p); k++ {
		s1 += max(at(k)-math.Exp(eps)*at(k-1), 0)
		s2 += max(at(k-1)-math.Exp(eps)*at(k), 0)
	}
	return max(s1, s2)
}

// svtDivergence is the exact hockey-stick divergence at e^eps of one
// AboveThreshold instance of round rd over adversarial query streams of
// length up to d: k − 1 queries at the threshold then one, each moved by
// ±1 in the neighbour (the ⊥ queries one way, the last the other, the
// pattern of Dwork–Roth Thm 3.23's proof that makes the loss approach
// ε_svt/c), maximised over the streams, minus the truncated mass of ρ.
func svtDivergence(rd round, d int, eps float64) float64 {
	ts, tq := rd.thresh.Scale(), rd.query.Scale()
	bound := int64(40 * ts)
	tail := 2 * lapTail(ts, bound+1)
	T := rd.tau
	worst := 0.0
	for k := 1; k <= d; k++ {
		for _, off := range []int64{-int64(2 * tq), 0, int64(2 * tq)} {
			for _, dir := range []int64{-1, 1} {
				q, q2 := make([]int64, k), make([]int64, k)
				for i := range q {
					q[i], q2[i] = T+off, T+off+dir
				}
				q2[k-1] = T + off - dir
				a := aboveThresholdLaw(q, T, ts, tq, bound)
				b := aboveThresholdLaw(q2, T, ts, tq, bound)
				s1, s2 := 0.0, 0.0
				for o := range a {
					s1 += max(a[o]-math.Exp(eps)*b[o], 0)
					s2 += max(b[o]-math.Exp(eps)*a[o], 0)
				}
				worst = max(worst, s1-tail, s2-tail)
			}
		}
	}
	return worst
}

// TestCountingOnTreesLedger checks the privacy proof of doc.go on the
// production parameters, exactly: for a grid of Params and root bounds U,
// NewCountingOnTrees's root bound and every round of schedule are each
// (ε_k, δ_k)-DP against one unit change at the share of (ε_u, δ_u) the
// proof allots them — the root at rootShare, each truncated Laplace step
// at ((1 − svtShare)·ε_i/c_i, δ_i/c_i), each AboveThreshold instance at
// ε_svt/c_i with no δ — by the exact hockey-stick divergence of the
// component's output law for the worst neighbouring inputs; the
// allotments compose (Fact 2.3) to at most (ε_u, δ_u), and (ε_u, δ_u) to
// (ε, δ) under the relation (Fact 2.2). Each component is tight at its
// allotment: halving any noise scale (the root's, a round's truncated
// Laplace, a round's threshold or query noise) makes its divergence
// exceed its δ_k, so this test fails (mutant runs in the commit message).
func TestCountingOnTreesLedger(t *testing.T) {
	for _, c := range []struct {
		p Params
		u []int64
	}{
		{Params{Bins: 16, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.AddRemove}, []int64{50, 1 << 12}},
		{Params{Bins: 16, Arity: 2, Epsilon: 1, Delta: 1e-6, Alpha: 0.5, Relation: mechanism.ReplaceOne}, []int64{1 << 12}},
		{Params{Bins: 27, Arity: 3, Epsilon: 2, Delta: 1e-3, Alpha: 0.1, Relation: mechanism.AddRemove}, []int64{300}},
		{Params{Bins: 4, Arity: 2, Epsilon: 0.5, Delta: 1e-9, Alpha: 0.5, Relation: mechanism.ReplaceOne}, []int64{1 << 16}},
	} {
		cot, err := NewCountingOnTrees(c.p)
		if err != nil {
			t.Fatal(err)
		}
		epsU, deltaU := unitBudget(c.p)
		if c.p.Relation == mechanism.ReplaceOne {
			if e, d := 2*epsU, (1+math.Exp(epsU))*deltaU; e > c.p.Epsilon*(1+1e-12) || d > c.p.Delta*(1+1e-12) {
				t.Errorf("%+v: two unit changes give (%v, %v)", c.p, e, d)
			}
		}
		eps0, delta0 := epsU*rootShare, deltaU*rootShare
		if got := shiftDivergence(cot.root, eps0); got > delta0 {
			t.Errorf("%+v: root bound: divergence %v at ε₀=%v, δ₀=%v", c.p, got, eps0, delta0)
		}
		d := cot.tree.Depth()
		for _, u := range c.u {
			rounds, err := schedule(c.p, d, u, cot.kappa, cot.space)
			if err != nil {
				t.Fatal(err)
			}
			sumEps, sumDelta := eps0, delta0
			for i, rd := range rounds {
				cf := float64(rd.cutoff)
				epsI, deltaI := rd.eps, rd.delta
				epsT, deltaT := epsI*(1-svtShare)/cf, deltaI/cf
				if got := shiftDivergence(rd.tlap, epsT); got > deltaT {
					t.Errorf("%+v U=%d round %d: truncated Laplace divergence %v at (%v, %v)", c.p, u, i, got, epsT, deltaT)
				}
				if got := svtDivergence(rd, d, epsI*svtShare/cf); got > 1e-12 {
					t.Errorf("%+v U=%d round %d: AboveThreshold divergence %v at ε=%v", c.p, u, i, got, epsI*svtShare/cf)
				}
				sumEps += epsI
				sumDelta += deltaI
			}
			if sumEps > epsU*(1+1e-12) || sumDelta > deltaU*(1+1e-12) {
				t.Errorf("%+v U=%d: components sum to (%v, %v) > (%v, %v)", c.p, u, sumEps, sumDelta, epsU, deltaU)
			}
		}
	}
}
