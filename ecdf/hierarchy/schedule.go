package hierarchy

import (
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Params configures a CountingOnTrees release: the tree (Bins, Arity),
// the guarantee (Epsilon, Delta, Relation) and the multiplicative slack
// Alpha ∈ (0, 1) the thresholds are spaced for.
type Params struct {
	Bins, Arity    int
	Epsilon, Delta float64
	Alpha          float64
	Relation       mechanism.Relation
}

// Fractions of the per-change budget (ε_u, δ_u) (unitBudget): the root
// bound of Algorithm 4 takes rootShare of both, the classification rounds
// the rest; within a round the sparse vector takes svtShare of ε_i and
// the ≤ c truncated Laplace steps the rest of ε_i and all of δ_i.
const (
	rootShare = 0.05
	svtShare  = 0.5
	// failure is β, the total probability allowed for the sparse
	// vector's noise to exceed the margins a_i (Lemma 2.9), split evenly
	// over the rounds; it sets margins, never privacy.
	failure = 0.1
	// maxCutoff bounds c, the ⊤ answers per tree and round.
	maxCutoff = 8
	// maxRounds bounds m, the number of thresholds.
	maxRounds = 400
)

// unitBudget returns (ε_u, δ_u), the guarantee of the algorithm against
// one unit change (one leaf count ±1, an add/remove neighbour): (ε, δ)
// under add/remove; under replace-one, a move is two unit changes and
// group privacy (Fact 2.2) turns (ε_u, δ_u) into (2ε_u, (1 + e^{ε_u})δ_u),
// so ε_u = ε/2 and δ_u = δ/(1 + e^{ε/2}).
func unitBudget(p Params) (eps, delta float64) {
	if p.Relation == mechanism.AddRemove {
		return p.Epsilon, p.Delta
	}
	return p.Epsilon / 2, p.Delta / (1 + math.Exp(p.Epsilon/2))
}

// round holds the public parameters of classification round i.
type round struct {
	tau    int64                  // τ_i, the threshold
	eps    float64                // ε_i, the round's budget against one unit change
	delta  float64                // δ_i
	cutoff int                    // c_i, ⊤ answers per tree before the default ⊥
	svtEps float64                // ε of the sparse vector (all c_i AboveThreshold instances)
	thresh *noise.DiscreteLaplace // ρ ~ Lap_Z(≥ 2c_i/ε_svt)
	query  *noise.DiscreteLaplace // ν ~ Lap_Z(≥ 4c_i/ε_svt)
	tlap   truncatedLaplace       // per-step truncated Laplace, (ε_i(1−s)/c_i, δ_i/c_i)
	margin int64                  // a_i: |ν − ρ| ≤ a_i except with probability β/m
	low    int64                  // L_i = max(τ_i − A_i, 0): every node marked has w ≥ L_i
	high   int64                  // H_{i−1}: every node left has w ≤ H_{i−1} (w.h.p.)
	est    int64                  // the estimate of the nodes marked in this round
}

// schedule returns the rounds for root bound u (U of Algorithm 4) on a
// tree of depth d: thresholds τ_i = ⌈u/ρ^i⌉ with ρ = (1+sα)/(1−sα) for
// the spacing s ∈ (0, 1] (s < 1 leaves the slack (α − sα)·τ_i to absorb
// the margins of round i, Lemma 4.6's Equation 5), budgets
// ε_i, δ_i ∝ ρ^i (geometric, summing to the classification budget), down
// to the first τ_m with κ·τ_m at most the margin of its round
// Δ_m = A_m + 2a_m: the budgets keep Δ_i/τ_i about κ in every round
// (Lemma 4.6's Δ_i ≤ κ·τ_i, Equations 5 and 6).
func schedule(p Params, d int, u int64, kappa, spacing float64) ([]round, error) {
	epsU, deltaU := unitBudget(p)
	epsC, deltaC := epsU*(1-rootShare)*(1-1e-12), deltaU*(1-rootShare)*(1-1e-12)
	rho := (1 + spacing*p.Alpha) / (1 - spacing*p.Alpha)
	for m := 1; m <= maxRounds; m++ {
		rounds, err := buildRounds(p, d, u, m, rho, epsC, deltaC)
		if err != nil {
			return nil, err
		}
		last := rounds[len(rounds)-1]
		if float64(last.tau)*kappa <= float64(last.tlap.limit+2*last.margin) || last.tau <= 1 || m == maxRounds {
			return rounds, nil
		}
	}
	return nil, fmt.Errorf("hierarchy: unreachable")
}

// buildRounds returns m rounds with geometric budgets.
func buildRounds(p Params, d int, u int64, m int, rho, epsC, deltaC float64) ([]round, error) {
	// weights ρ^{i−m}, i = 1..m, normalised
	w := make([]float64, m)
	sum := 0.0
	for i := range m {
		w[i] = math.Pow(rho, float64(i+1-m))
		sum += w[i]
	}
	rounds := make([]round, m)
	high := u
	beta := failure / float64(m)
	for i := range m {
		r := round{tau: int64(math.Ceil(float64(u) / math.Pow(rho, float64(i+1)))), high: high}
		eps, delta := epsC*w[i]/sum, deltaC*w[i]/sum
		r.eps, r.delta = eps, delta
		r.svtEps = eps * svtShare
		for c := 1; ; c++ {
			tl, err := newTruncatedLaplace(eps*(1-svtShare)/float64(c), delta/float64(c))
			if err != nil {
				return nil, err
			}
			r.cutoff, r.tlap = c, tl
			// Sparse with cutoff c (DR14 Alg. 2): threshold noise
			// Lap(2c/ε), query noise Lap(4c/ε).
			if r.thresh, err = laplaceFor(r.svtEps / (2 * float64(c))); err != nil {
				return nil, err
			}
			if r.query, err = laplaceFor(r.svtEps / (4 * float64(c))); err != nil {
				return nil, err
			}
			r.margin = int64(math.Ceil(r.query.Scale()*math.Log(2*float64(d)/beta) + r.thresh.Scale()*math.Log(2*float64(c)/beta)))
			r.low = max(r.tau-tl.limit, 0)
			// Disjoint marked nodes each weigh ≥ τ_i − A_i (if positive) and
			// a root weighs ≤ H: fewer than c transitions when c·(τ_i − A_i) > H.
			if c >= maxCutoff || (r.low > 0 && int64(c)*r.low > high) {
				break
			}
		}
		r.est = estimate(p.Alpha, r.low, high)
		rounds[i] = r
		high = r.tau + r.tlap.limit + 2*r.margin
	}
	return rounds, nil
}

// estimate returns the count e minimising max over w ∈ [lo, hi] of
// max(|e − w| − α·w, 0): ((1+α)·lo + (1−α)·hi)/2, kept in [lo, hi].
func estimate(alpha float64, lo, hi int64) int64 {
	e := int64(math.Round(((1+alpha)*float64(lo) + (1-alpha)*float64(hi)) / 2))
	return min(max(e, lo), max(hi, lo))
}

// above is one AboveThreshold comparison of round rd's sparse vector:
// query value q with fresh query noise ν against the threshold
// τ + A + a moved by the instance's threshold noise rho (⊤ when true).
func (rd *round) above(q, rho int64, src noise.Source) bool {
	return q+drawNoise(rd.query, src) >= rd.tau+rd.tlap.limit+rd.margin+rho
}
