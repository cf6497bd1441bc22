package smooth

import (
	"fmt"
	"math"
	"slices"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// problem holds A = DZ in compressed sparse rows, b = c − DF̂, and the
// prefix pattern Z (to form F́ = F̂ + Zν). Columns are the noise nodes
// used by some prefix, numbered in order of first use.
type problem struct {
	rows, cols int
	aPtr       []int
	aIdx       []int
	aVal       []float64
	b          []float64
	zPtr       []int
	zIdx       []int
	zVal       []float64
}

func newProblem(f []float64, m mechanism.Mechanism) (*problem, error) {
	n := len(f)
	p := &problem{rows: n + 1, zPtr: []int{0}, aPtr: []int{0}}
	column := make([]int, m.Nodes())
	for j := range column {
		column[j] = -1
	}
	var terms []mechanism.Term
	for i := 1; i <= n; i++ {
		terms = m.Terms(i, terms[:0])
		for _, t := range terms {
			if t.Node < 0 || t.Node >= len(column) || math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
				return nil, fmt.Errorf("mechanism %s gives prefix %d the term %+v: want a node in [0, %d) and a finite coefficient", m.Name(), i, t, len(column))
			}
			if column[t.Node] < 0 {
				column[t.Node] = p.cols
				p.cols++
			}
			p.zIdx = append(p.zIdx, column[t.Node])
			p.zVal = append(p.zVal, t.Coef)
		}
		p.zPtr = append(p.zPtr, len(p.zIdx))
	}
	// Row 0: F́_1 ≥ 0. Row r (1..N−1): F́_{r+1} − F́_r ≥ 0. Row N: −F́_N ≥ −1.
	acc := make([]float64, p.cols)
	var touched []int
	for r := 0; r <= n; r++ {
		touched = touched[:0]
		if r < n {
			touched = p.addRow(acc, touched, r, 1)
		}
		if r > 0 {
			touched = p.addRow(acc, touched, r-1, -1)
		}
		slices.Sort(touched)
		for _, j := range slices.Compact(touched) {
			if acc[j] != 0 {
				p.aIdx = append(p.aIdx, j)
				p.aVal = append(p.aVal, acc[j])
			}
			acc[j] = 0
		}
		p.aPtr = append(p.aPtr, len(p.aIdx))
	}
	p.b = make([]float64, n+1)
	p.b[0] = -f[0]
	for r := 1; r < n; r++ {
		p.b[r] = -(f[r] - f[r-1])
	}
	p.b[n] = -1 + f[n-1]
	return p, nil
}

// addRow adds s times prefix row i (0-based) of Z to acc and appends the
// columns it touches.
func (p *problem) addRow(acc []float64, touched []int, i int, s float64) []int {
	for k := p.zPtr[i]; k < p.zPtr[i+1]; k++ {
		acc[p.zIdx[k]] += s * p.zVal[k]
		touched = append(touched, p.zIdx[k])
	}
	return touched
}

// rowScale returns W = |A||A|ᵀ1, the diagonal that dominates AAᵀ
// (W − AAᵀ is diagonally dominant, hence positive semi-definite). A zero
// row of A gets 1.
func (p *problem) rowScale() []float64 {
	col := make([]float64, p.cols)
	for k, j := range p.aIdx {
		col[j] += math.Abs(p.aVal[k])
	}
	w := make([]float64, p.rows)
	for r := range w {
		for k := p.aPtr[r]; k < p.aPtr[r+1]; k++ {
			w[r] += math.Abs(p.aVal[k]) * col[p.aIdx[k]]
		}
		if w[r] == 0 {
			w[r] = 1
		}
	}
	return w
}

// normEstimate estimates λ_max(W^{-1/2}AAᵀW^{-1/2}) ≤ 1 from below by power
// iteration.
func (p *problem) normEstimate(w []float64) float64 {
	x := make([]float64, p.rows)
	ax := make([]float64, p.rows)
	nu := make([]float64, p.cols)
	for r := range x {
		x[r] = 1 + 0.5*math.Sin(float64(r))
	}
	est := 0.0
	for range 30 {
		for r := range x {
			ax[r] = x[r] / math.Sqrt(w[r])
		}
		p.atLambda(nu, ax)
		p.apply(ax, nu)
		for r := range ax {
			ax[r] /= math.Sqrt(w[r])
		}
		norm := math.Sqrt(dot(ax, ax))
		if norm == 0 {
			return 0
		}
		est = norm / math.Sqrt(dot(x, x))
		for r := range x {
			x[r] = ax[r] / norm
		}
	}
	return est
}

// atLambda sets nu = Aᵀλ.
func (p *problem) atLambda(nu, lambda []float64) {
	clear(nu)
	for r, l := range lambda {
		if l == 0 {
			continue
		}
		for k := p.aPtr[r]; k < p.aPtr[r+1]; k++ {
			nu[p.aIdx[k]] += p.aVal[k] * l
		}
	}
}

// apply sets out = Aν.
func (p *problem) apply(out, nu []float64) {
	for r := range out {
		v := 0.0
		for k := p.aPtr[r]; k < p.aPtr[r+1]; k++ {
			v += p.aVal[k] * nu[p.aIdx[k]]
		}
		out[r] = v
	}
}

// slack sets s = Aν − b (≥ 0 where the constraints hold).
func (p *problem) slack(s, nu []float64) {
	p.apply(s, nu)
	for r := range s {
		s[r] -= p.b[r]
	}
}

func (p *problem) violation(nu []float64) float64 {
	s := make([]float64, p.rows)
	p.slack(s, nu)
	return max(0, -slices.Min(s))
}

// addZ adds Zν to g.
func (p *problem) addZ(g, nu []float64) {
	for i := range g {
		for k := p.zPtr[i]; k < p.zPtr[i+1]; k++ {
			g[i] += p.zVal[k] * nu[p.zIdx[k]]
		}
	}
}

// solve runs accelerated projected gradient ascent on the dual, tracking
// ν = Aᵀ· of both the iterate λ and the extrapolated point y, so that one
// iteration costs one product with Aᵀ and one with A.
// It stops at the relative tolerance of opts, violations measured against
// initial, the violation at ν = 0.
func (p *problem) solve(opts treeOptions, initial float64) ([]float64, treeStats) {
	w := p.rowScale()
	scale := min(max(1.1*p.normEstimate(w), 1e-3), 1)
	lambda, y, next := make([]float64, p.rows), make([]float64, p.rows), make([]float64, p.rows)
	nuLambda, nuY, nuNext := make([]float64, p.cols), make([]float64, p.cols), make([]float64, p.cols)
	s := make([]float64, p.rows)
	t := 1.0
	st := treeStats{InitialViolation: initial}
	for st.Iterations = 1; st.Iterations <= opts.MaxIterations; st.Iterations++ {
		p.slack(s, nuY) // the gradient of the (minimised) negative dual at y
		for {
			step := 0.0 // (λ⁺ − y)ᵀ W (λ⁺ − y)
			for r := range next {
				next[r] = max(0, y[r]-s[r]/(scale*w[r]))
				d := next[r] - y[r]
				step += w[r] * d * d
			}
			p.atLambda(nuNext, next)
			if scale >= 1 || sqDist(nuNext, nuY) <= scale*step*(1+1e-9) {
				break
			}
			scale = min(2*scale, 1)
		}
		restart := 0.0
		for r := range next {
			restart += s[r] * (next[r] - lambda[r])
		}
		tNext, momentum := (1+math.Sqrt(1+4*t*t))/2, 0.0
		if restart > 0 { // gradient-based adaptive restart: drop the momentum
			tNext = 1
		} else {
			momentum = (t - 1) / tNext
		}
		for r := range y {
			y[r] = next[r] + momentum*(next[r]-lambda[r])
		}
		for j := range nuY {
			nuY[j] = nuNext[j] + momentum*(nuNext[j]-nuLambda[j])
		}
		lambda, next = next, lambda
		nuLambda, nuNext = nuNext, nuLambda
		t = tNext
		if st.Iterations%16 == 0 && p.converged(lambda, nuLambda, s, opts.Tolerance, &st) {
			return nuLambda, st
		}
	}
	st.Iterations--
	p.converged(lambda, nuLambda, s, opts.Tolerance, &st)
	return nuLambda, st
}

// converged recomputes ν = Aᵀλ exactly and evaluates the primal violation
// and duality gap at λ.
func (p *problem) converged(lambda, nu, s []float64, tol float64, st *treeStats) bool {
	p.atLambda(nu, lambda)
	p.slack(s, nu)
	st.Violation = max(0, -slices.Min(s))
	st.Gap = math.Abs(dot(lambda, s)) // ‖ν‖² − λᵀb = λᵀ(Aν − b)
	st.Objective = dot(nu, nu) / 2
	st.Converged = st.Violation <= tol*st.InitialViolation && st.Gap <= tol*st.Objective
	return st.Converged
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// sqDist is ‖a − b‖².
func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}
