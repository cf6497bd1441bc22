package hierarchy

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Step is one randomised step of a CountingOnTrees release, with the
// share (Epsilon, Delta) of the per-unit-change budget that the privacy
// proof (package documentation) assigns to it: the pieces an auditor can
// run on its own, since the whole release has no fixed-noise likelihood
// ratio. Each step is (Epsilon, Delta)-DP against inputs whose query
// values each move by at most one (what a unit change does to them; the
// sparse vector's queries may be chosen adaptively).
type Step struct {
	// Name says which step: "root bound", "round i: truncated Laplace"
	// or "round i: sparse vector".
	Name           string
	Epsilon, Delta float64
	// Threshold is the value the step compares its queries with (the
	// round's τ_i for a truncated Laplace step, τ_i + A_i + a_i for the
	// sparse vector; 0 for the root bound).
	Threshold int64
	// Queries is the most query values Draw reads in a release (the
	// tree's depth for the sparse vector, 1 otherwise); the sparse
	// vector's share holds for a stream of any length.
	Queries int
	draw    func(q []int64, src noise.Source) int64
}

// Draw runs the step on the query values q with randomness from src,
// with the release's own samplers and comparisons: the root bound
// returns U = q₀ + Z + A₀, a truncated Laplace step q₀ + X, and a sparse
// vector instance (one AboveThreshold run: threshold noise, then one
// comparison per query until the first ⊤) the index of its first ⊤, or
// len(q) for none.
func (s Step) Draw(q []int64, src noise.Source) int64 { return s.draw(q, src) }

// Steps returns the root bound and, for each round of the schedule that
// root bound u sets, its truncated Laplace step and one sparse-vector
// instance, in the release's order. The shares are those of one unit
// change: under replace-one they are computed from (ε/2, δ/(1+e^{ε/2}))
// (package documentation, group privacy).
func (c *CountingOnTrees) Steps(u int64) ([]Step, error) { return c.steps(u, 1) }

// ControlSteps returns Steps with every Laplace scale halved (each
// truncation limit chosen anew for the same δ share) and each ε share
// doubled: the same steps under-noised by a factor 2, a mutant that an
// audit must catch above the honest share.
func (c *CountingOnTrees) ControlSteps(u int64) ([]Step, error) { return c.steps(u, 2) }

// steps builds the steps with every ε share multiplied by f.
func (c *CountingOnTrees) steps(u int64, f float64) ([]Step, error) {
	if u <= 0 {
		return nil, fmt.Errorf("hierarchy: counting-on-trees steps: root bound %d: must be positive: %w", u, ErrInvalid)
	}
	epsU, deltaU := unitBudget(c.p)
	root, err := newTruncatedLaplace(f*epsU*rootShare, deltaU*rootShare)
	if err != nil {
		return nil, err
	}
	steps := []Step{{Name: "root bound", Epsilon: f * epsU * rootShare, Delta: deltaU * rootShare, Queries: 1,
		draw: func(q []int64, src noise.Source) int64 { return q[0] + root.Sample(src) + root.limit }}}
	rounds, err := schedule(c.p, c.tree.Depth(), u, c.kappa, c.space)
	if err != nil {
		return nil, err
	}
	for i := range rounds {
		rd := rounds[i]
		cut := float64(rd.cutoff)
		epsT, deltaT, epsS := f*rd.eps*(1-svtShare)/cut, rd.delta/cut, f*rd.svtEps/cut
		threshold := rd.tau + rd.tlap.limit + rd.margin
		if f != 1 {
			limit := rd.tlap.limit
			if rd.tlap, err = newTruncatedLaplace(epsT, deltaT); err != nil {
				return nil, err
			}
			rd.margin += limit - rd.tlap.limit // the same threshold τ + A + a
			if rd.thresh, err = laplaceFor(epsS / 2); err != nil {
				return nil, err
			}
			if rd.query, err = laplaceFor(epsS / 4); err != nil {
				return nil, err
			}
		}
		steps = append(steps,
			Step{Name: fmt.Sprintf("round %d: truncated Laplace", i+1), Epsilon: epsT, Delta: deltaT, Threshold: rd.tau, Queries: 1,
				draw: func(q []int64, src noise.Source) int64 { return q[0] + rd.tlap.Sample(src) }},
			Step{Name: fmt.Sprintf("round %d: sparse vector", i+1), Epsilon: epsS, Threshold: threshold, Queries: c.tree.Depth(),
				draw: func(q []int64, src noise.Source) int64 {
					rho := rd.thresh.Sample(src)
					for j, v := range q {
						if rd.above(v, rho, src) {
							return int64(j)
						}
					}
					return int64(len(q))
				}})
	}
	return steps, nil
}
