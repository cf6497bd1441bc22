package logreg

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Options configures Fit. The zero value gives scikit-learn's defaults for
// LogisticRegression: C = 1, an unpenalised intercept.
type Options struct {
	// C is the inverse regularisation strength: the objective is
	// C·Σ_i loss_i + ‖w‖²/2. Zero means 1; +Inf fits without penalty
	// (maximum likelihood).
	C float64
	// MaxIterations bounds the Newton iterations; zero means 100.
	MaxIterations int
	// GradientTolerance stops the iterations when every component of the
	// gradient of the mean objective (loss_i averaged, penalty ‖w‖²/(2Cn))
	// is below it in absolute value; zero means 1e-8.
	GradientTolerance float64
}

// Model is a fitted logistic regression: the probability of the positive
// class at x is σ(Intercept + Σ_j Coef[j]·x[j]), σ(z) = 1/(1+e^−z).
type Model struct {
	Intercept float64
	Coef      []float64
	// Iterations is the number of Newton iterations Fit took.
	Iterations int
}

// logit returns Intercept + Σ_j Coef[j]·x[j], the log-odds of the positive
// class at x. x must have len(m.Coef) entries; it panics otherwise, as an
// index out of range would.
func (m *Model) logit(x []float64) float64 {
	if len(x) != len(m.Coef) {
		panic(fmt.Sprintf("logreg: feature vector has %d entries, the model %d", len(x), len(m.Coef)))
	}
	z := m.Intercept
	for j, c := range m.Coef {
		z += c * x[j]
	}
	return z
}

// Predict returns the predicted probability σ(Logit(x)) of the positive
// class at x.
func (m *Model) Predict(x []float64) float64 {
	return sigmoid(m.logit(x))
}

// Fit trains an L2-regularised logistic regression on the rows of X with
// labels y ∈ {0, 1}, minimising C·Σ_i loss_i + ‖w‖²/2 (the intercept is not
// penalised), the objective of scikit-learn's LogisticRegression(C), by
// Newton's method with a line search. Rows must all have the same,
// non-zero length and finite entries, and both classes must occur. X is
// read, never modified.
func Fit(X [][]float64, y []int, opts Options) (*Model, error) {
	return FitRows(len(X), func(i int, _ []float64) ([]float64, error) { return X[i], nil }, y, opts)
}

// FitRows is Fit on n rows that row gives one at a time, so that they
// need not be held all at once: row(i, dst) returns row i, written into
// dst or elsewhere, and is called once per row, in order, before the
// first iteration (dst is a scratch row it may reuse, nil or too short
// at first). An error of row stops the fit and is returned as is. The
// model is Fit's on the same rows, bit for bit.
func FitRows(n int, row func(i int, dst []float64) ([]float64, error), y []int, opts Options) (*Model, error) {
	obj, err := newObjective(n, row, y, opts.C)
	if err != nil {
		return nil, err
	}
	maxIter := opts.MaxIterations
	if maxIter == 0 {
		maxIter = 100
	}
	tol := opts.GradientTolerance
	if tol == 0 {
		tol = 1e-8
	}
	if maxIter < 0 || tol < 0 || math.IsNaN(tol) {
		return nil, fmt.Errorf("logreg: invalid options: MaxIterations %d, GradientTolerance %v", maxIter, tol)
	}
	problem := optimize.Problem{Func: obj.value, Grad: obj.gradient, Hess: obj.hessian}
	settings := &optimize.Settings{
		GradientThreshold: tol,
		MajorIterations:   maxIter,
		Converger:         optimize.NeverTerminate{},
	}
	result, err := optimize.Minimize(problem, obj.initial(), settings, &optimize.Newton{})
	if result == nil {
		return nil, fmt.Errorf("logreg: Newton's method failed: %w", err)
	}
	// A line search can fail to improve a point that is already optimal to
	// floating-point precision; accept any end whose gradient is small.
	grad := make([]float64, len(result.X))
	obj.gradient(grad, result.X)
	if g := floats.Norm(grad, math.Inf(1)); g > math.Max(tol, stalledTolerance) {
		return nil, fmt.Errorf("logreg: Newton's method stopped (%v, %v) after %d iterations with gradient norm %.3g > %.3g",
			result.Status, err, result.Stats.MajorIterations, g, tol)
	}
	return &Model{
		Intercept:  result.X[0],
		Coef:       append([]float64(nil), result.X[1:]...),
		Iterations: result.Stats.MajorIterations,
	}, nil
}

// stalledTolerance is the largest gradient component accepted when the
// line search stops before GradientTolerance is reached (line-search failure near the
// optimum).
const stalledTolerance = 1e-6

// objective is the mean penalised log-loss
//
//	f(β) = (1/n)·Σ_i [log(1+e^{z_i}) − y_i·z_i] + ‖w‖²/(2Cn),  z_i = β·x̃_i,
//
// scikit-learn's objective divided by C·n, with β = (b, w) and
// x̃_i = (1, x_i). Its gradient and Hessian are
//
//	∇f = (1/n)·Σ_i (σ(z_i) − y_i)·x̃_i + (0, w)/(Cn),
//	∇²f = (1/n)·Σ_i σ(z_i)(1 − σ(z_i))·x̃_i x̃_iᵀ + diag(0, 1, …, 1)/(Cn).
//
// The rows x̃_i are stored sparsely (one-hot features are mostly zero), so
// an evaluation costs O(nnz) and a Hessian O(Σ_i nnz_i²).
type objective struct {
	n, dim int // rows, parameters (features + 1)
	// Row i's non-zeros are at cols[start[i]:start[i+1]], values vals[…];
	// column 0 is the constant 1 of the intercept.
	start   []int
	cols    []int32
	vals    []float64
	y       []float64
	penalty float64 // 1/(C·n), 0 without penalty
	// Cache of the last evaluation: the optimiser asks for value,
	// gradient and Hessian at the same point.
	at, grad, z []float64
	val         float64
}

// newObjective validates the n rows (FitRows), y and C and stores the
// non-zeros of the rows.
func newObjective(n int, rows func(int, []float64) ([]float64, error), y []int, c float64) (*objective, error) {
	if c == 0 {
		c = 1
	}
	if !(c > 0) {
		return nil, fmt.Errorf("logreg: C = %v, must be positive", c)
	}
	if n == 0 {
		return nil, errors.New("logreg: no training rows")
	}
	if len(y) != n {
		return nil, fmt.Errorf("logreg: %d rows but %d labels", n, len(y))
	}
	row, err := rows(0, nil)
	if err != nil {
		return nil, err
	}
	d := len(row)
	if d == 0 {
		return nil, errors.New("logreg: rows have no features")
	}
	if d >= math.MaxInt32 {
		return nil, fmt.Errorf("logreg: %d features are too many", d)
	}
	o := &objective{n: n, dim: d + 1, start: make([]int, 1, n+1), y: make([]float64, n), penalty: 1 / (c * float64(n))}
	var positives int
	for i := range n {
		if i > 0 {
			if row, err = rows(i, row); err != nil {
				return nil, err
			}
		}
		if len(row) != d {
			return nil, fmt.Errorf("logreg: row %d has %d features, row 0 has %d", i, len(row), d)
		}
		if cap(o.cols)-len(o.cols) < d+1 {
			o.cols, o.vals = growNonZeros(o.cols, o.vals, i, n, d)
		}
		o.cols = append(o.cols, 0)
		o.vals = append(o.vals, 1)
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("logreg: row %d feature %d is %v", i, j, v)
			}
			if v != 0 {
				o.cols = append(o.cols, int32(j+1))
				o.vals = append(o.vals, v)
			}
		}
		o.start = append(o.start, len(o.cols))
		switch y[i] {
		case 0:
		case 1:
			o.y[i] = 1
			positives++
		default:
			return nil, fmt.Errorf("logreg: label %d of row %d is not 0 or 1", y[i], i)
		}
	}
	if positives == 0 || positives == n {
		return nil, fmt.Errorf("logreg: all %d labels are %d; both classes must occur", n, y[0])
	}
	return o, nil
}

// growNonZeros makes room in the non-zeros cols and vals of the first
// rows of n (rows of d features and the intercept) for those of the
// others, at the mean count so far plus an eighth: a few large copies
// instead of many, and little unused room.
func growNonZeros(cols []int32, vals []float64, rows, n, d int) ([]int32, []float64) {
	extra := d + 1
	if rows > 0 {
		extra = max(extra, len(cols)/rows*(n-rows)*9/8)
	}
	return slices.Grow(cols, extra), slices.Grow(vals, extra)
}

// initial returns the initial point: w = 0 and the intercept fitting the
// class frequency, the optimum of the intercept-only model.
func (o *objective) initial() []float64 {
	var positives float64
	for _, v := range o.y {
		positives += v
	}
	beta := make([]float64, o.dim)
	beta[0] = math.Log(positives / (float64(o.n) - positives))
	return beta
}

// value returns f(beta).
func (o *objective) value(beta []float64) float64 {
	o.evaluate(beta)
	return o.val
}

// gradient stores ∇f(beta) in grad.
func (o *objective) gradient(grad, beta []float64) {
	o.evaluate(beta)
	copy(grad, o.grad)
}

// hessian stores ∇²f(beta) in hess.
func (o *objective) hessian(hess *mat.SymDense, beta []float64) {
	o.evaluate(beta)
	// Accumulate the upper triangle of Σ_i s_i·x̃_i x̃_iᵀ; the columns of a
	// row are increasing, so (cols[a], cols[b]) with a ≤ b is upper.
	upper := make([]float64, o.dim*o.dim)
	for i := range o.n {
		p := sigmoid(o.z[i])
		s := p * (1 - p)
		cols, vals := o.cols[o.start[i]:o.start[i+1]], o.vals[o.start[i]:o.start[i+1]]
		for a, ca := range cols {
			sa := s * vals[a]
			line := upper[int(ca)*o.dim:]
			for b := a; b < len(cols); b++ {
				line[cols[b]] += sa * vals[b]
			}
		}
	}
	invN := 1 / float64(o.n)
	for j := range o.dim {
		for k := j; k < o.dim; k++ {
			hess.SetSym(j, k, upper[j*o.dim+k]*invN)
		}
		if j > 0 {
			hess.SetSym(j, j, hess.At(j, j)+o.penalty)
		}
	}
}

// evaluate computes the value, gradient and linear predictors z_i at beta
// unless they are cached.
func (o *objective) evaluate(beta []float64) {
	if o.at != nil && slices.Equal(o.at, beta) {
		return
	}
	if o.at == nil {
		o.at = make([]float64, o.dim)
		o.grad = make([]float64, o.dim)
		o.z = make([]float64, o.n)
	}
	copy(o.at, beta)
	clear(o.grad)
	var loss float64
	for i := range o.n {
		cols, vals := o.cols[o.start[i]:o.start[i+1]], o.vals[o.start[i]:o.start[i+1]]
		var z float64
		for a, c := range cols {
			z += beta[c] * vals[a]
		}
		o.z[i] = z
		loss += softplus(z) - o.y[i]*z
		r := sigmoid(z) - o.y[i]
		for a, c := range cols {
			o.grad[c] += r * vals[a]
		}
	}
	invN := 1 / float64(o.n)
	var norm2 float64
	o.grad[0] *= invN
	for j := 1; j < o.dim; j++ {
		norm2 += beta[j] * beta[j]
		o.grad[j] = o.grad[j]*invN + o.penalty*beta[j]
	}
	o.val = loss*invN + o.penalty*norm2/2
}

// sigmoid returns 1/(1+e^−z) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// softplus returns log(1+e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
