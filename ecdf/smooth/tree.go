package smooth

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// treeOptions controls the tree form of dp-ecdf Eq. 3 (treeL2).
type treeOptions struct {
	// Tolerance is the relative KKT residual at which the gradient method
	// (patterns that are not path-sum trees) stops: the largest
	// constraint violation relative to that of F̂ itself, and the
	// duality gap relative to ½‖ν‖². Both ratios are free of the units of
	// F̂, as the minimiser is. Zero means 1e-9. The exact method does not
	// use it.
	Tolerance float64
	// MaxIterations caps the accelerated projected-gradient iterations.
	// Zero means 100000.
	MaxIterations int
	// Gradient forces the gradient method on path-sum trees too (tests
	// and benchmarks compare the two).
	Gradient bool
}

// maxActiveSetIterations caps the active-set iterations of the exact
// method (a handful on releases, see EXPERIMENTS.md); treeL2 falls back
// to the gradient method if they have not settled by then.
const maxActiveSetIterations = 100

// treeStats reports how treeL2 ended. Stationarity (ν = Aᵀλ) holds
// exactly at every iterate of both methods, so Violation (primal
// feasibility), Gap (complementary slackness, λᵀ(Aν − b)) and
// NegativeMultiplier (dual feasibility) are the whole KKT residual.
type treeStats struct {
	// Exact reports that the active-set method on the path-sum tree
	// solved the problem, or that F̂ was already feasible; otherwise the
	// gradient method did.
	Exact bool
	// Iterations counts active-set iterations (each one exact solve) or
	// gradient iterations.
	Iterations int
	Converged  bool
	// Violation is the largest constraint violation of F̂ + Zν, in ECDF
	// units, and Gap the duality gap ½‖ν‖² − dual value = |λᵀ(Aν − b)|.
	Violation, Gap float64
	// NegativeMultiplier is max(0, −min λ): zero for the gradient method
	// (λ ≥ 0 by projection), at rounding level for the exact one.
	NegativeMultiplier float64
	// InitialViolation is the largest constraint violation of F̂ (ν = 0).
	InitialViolation float64
	// Objective is ½‖ν‖², with ν in ECDF units (multiply by n² for counts²).
	Objective float64
	// Repair is the largest change, max_i |F́_i − (F̂ + Zν)_i|, made by the
	// final pass that makes the result exactly feasible: PointwiseL2 after
	// the gradient method (at most N·Violation), a clip and running
	// maximum after the exact one (at most Violation).
	Repair float64
}

// treeL2 solves the tree form of dp-ecdf Eq. 3 for p = 2: it finds the node
// correction ν of least Euclidean norm such that F́ = F̂ + Zν is
// non-decreasing with F́_1 ≥ 0 and F́_N ≤ 1, where Z is the mechanism's
// prefix–node pattern (m.Terms). f is F̂ normalised by n and ν is in the
// same ECDF units: node noise in counts is n·ν, and since every node has
// the same variance (m.NodeVariance) the minimiser F́ does not depend on n.
//
// When the pattern is a path-sum tree (tree, kary, gaussian-tree; see
// pathTree) the problem is solved exactly by the primal–dual active-set
// method, each iteration an exact O(N) solve on the tree (glsSolver);
// otherwise (cascade) by the dual gradient method (problem.solve). The
// package documentation states the problem and proves both.
func treeL2(f []float64, m mechanism.Mechanism, opts treeOptions) ([]float64, treeStats, error) {
	if m == nil {
		return nil, treeStats{}, fmt.Errorf("smoothing tree-l2 needs the mechanism of the release (got nil)")
	}
	if err := checkCurve(f); err != nil {
		return nil, treeStats{}, err
	}
	if m.Bins() != len(f) {
		return nil, treeStats{}, fmt.Errorf("smoothing a curve of %d points with a mechanism over %d bins", len(f), m.Bins())
	}
	if opts.Tolerance == 0 {
		opts.Tolerance = 1e-9
	}
	if opts.MaxIterations == 0 {
		opts.MaxIterations = 100000
	}
	if !(opts.Tolerance > 0) || opts.MaxIterations < 0 {
		return nil, treeStats{}, fmt.Errorf("invalid tree smoothing options %+v: tolerance must be positive, iterations non-negative", opts)
	}
	initial := curveViolation(f)
	if initial == 0 { // F̂ ∈ K is its own projection
		return slices.Clone(f), treeStats{Exact: true, Converged: true}, nil
	}
	if !opts.Gradient {
		if t, ok := pathTreeOf(m); ok {
			if g, st, ok := exactTreeL2(f, t, initial); ok {
				return g, st, nil
			}
		}
	}
	return gradientTreeL2(f, m, opts, initial)
}

// curveViolation is the largest violation of 0 ≤ f_1 ≤ … ≤ f_N ≤ 1.
func curveViolation(f []float64) float64 {
	v := max(0, -f[0], f[len(f)-1]-1)
	for i := 1; i < len(f); i++ {
		v = max(v, f[i-1]-f[i])
	}
	return v
}

// exactTreeL2 runs the active-set method from the rows active at the
// pointwise solution PointwiseL2(F̂), read from its blocks: the rows
// inside a block, between blocks of equal clipped value, and the bounds
// a clipped end meets. It returns false if the active set has not
// settled within maxActiveSetIterations.
func exactTreeL2(f []float64, t *pathTree, initial float64) ([]float64, treeStats, bool) {
	n := len(f)
	act := make([]bool, n+1)
	i, prev := 0, 0.0
	for _, b := range pava(f) {
		v := b.value()
		act[i] = v == prev // g_1 ≥ 0 (0 = prev at i = 0), or equal neighbours
		for r := i + 1; r < i+b.count; r++ {
			act[r] = true
		}
		i, prev = i+b.count, v
	}
	act[n] = prev == 1
	s := newGLSSolver(t, f)
	defer s.release()
	it, ok := s.activeSet(act, maxActiveSetIterations)
	if !ok {
		return nil, treeStats{}, false
	}
	st := treeStats{Exact: true, Iterations: it, Converged: true, InitialViolation: initial, Objective: s.energy()}
	for r, l := range s.lambda { // comparisons, not max: see maxAbs
		sl := s.slack(r)
		if -sl > st.Violation {
			st.Violation = -sl
		}
		st.Gap += l * sl
		if -l > st.NegativeMultiplier {
			st.NegativeMultiplier = -l
		}
	}
	st.Gap = math.Abs(st.Gap)
	g := slices.Clone(s.g)
	for i := range g {
		g[i] = clip(g[i])
		if i > 0 {
			g[i] = max(g[i], g[i-1])
		}
		if d := math.Abs(g[i] - s.g[i]); d > st.Repair {
			st.Repair = d
		}
	}
	return g, st, true
}

// gradientTreeL2 solves treeL2's problem by the dual gradient method, then
// makes the result exactly feasible by PointwiseL2.
func gradientTreeL2(f []float64, m mechanism.Mechanism, opts treeOptions, initial float64) ([]float64, treeStats, error) {
	p, err := newProblem(f, m)
	if err != nil {
		return nil, treeStats{}, err
	}
	nu, st := p.solve(opts, initial)
	g := slices.Clone(f)
	p.addZ(g, nu)
	smoothed := PointwiseL2(g)
	for i := range g {
		st.Repair = max(st.Repair, math.Abs(smoothed[i]-g[i]))
	}
	return smoothed, st, nil
}

// pathTrees caches the last mechanism's pathTree: smoothing several
// curves of one mechanism (every release of a benchmark, the curves of
// one simulation) builds it once. Mechanisms are immutable, and only
// pointer-typed ones are cached, by identity.
var pathTrees struct {
	sync.Mutex
	m  mechanism.Mechanism
	t  *pathTree
	ok bool
}

// pathTreeOf returns m's pattern as a pathTree (newPathTree), cached.
func pathTreeOf(m mechanism.Mechanism) (*pathTree, bool) {
	if reflect.ValueOf(m).Kind() != reflect.Pointer {
		return newPathTree(m)
	}
	pathTrees.Lock()
	defer pathTrees.Unlock()
	if pathTrees.m != m {
		pathTrees.t, pathTrees.ok = newPathTree(m)
		pathTrees.m = m
	}
	return pathTrees.t, pathTrees.ok
}
