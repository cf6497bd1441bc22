package logreg

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// Options configures Fit. The zero value gives scikit-learn's defaults for
// LogisticRegression: C = 1, an unpenalised intercept.
type Options struct {
	// C is the inverse regularisation strength: the objective is
	// C·Σ_i loss_i + ‖w‖²/2. Zero means 1; +Inf fits without penalty
	// (maximum likelihood).
	C float64
	// MaxIterations bounds the L-BFGS iterations; zero means 1000.
	MaxIterations int
	// GradientTolerance stops L-BFGS when every component of the gradient
	// of the mean objective (loss_i averaged, penalty ‖w‖²/(2Cn)) is
	// below it in absolute value; zero means 1e-8.
	GradientTolerance float64
}

// Model is a fitted logistic regression: the probability of the positive
// class at x is σ(Intercept + Σ_j Coef[j]·x[j]), σ(z) = 1/(1+e^−z).
type Model struct {
	Intercept float64
	Coef      []float64
	// Iterations is the number of L-BFGS iterations Fit took.
	Iterations int
}

// Logit returns Intercept + Σ_j Coef[j]·x[j], the log-odds of the positive
// class at x. x must have len(m.Coef) entries; it panics otherwise, as an
// index out of range would.
func (m *Model) Logit(x []float64) float64 {
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
	return sigmoid(m.Logit(x))
}

// Fit trains an L2-regularised logistic regression on the rows of X with
// labels y ∈ {0, 1}, minimising C·Σ_i loss_i + ‖w‖²/2 (the intercept is not
// penalised) by L-BFGS, as scikit-learn's LogisticRegression(C) does with
// its default lbfgs solver. Rows must all have the same, non-zero length and
// finite entries, and both classes must occur.
func Fit(X [][]float64, y []int, opts Options) (*Model, error) {
	obj, err := newObjective(X, y, opts.C)
	if err != nil {
		return nil, err
	}
	maxIter := opts.MaxIterations
	if maxIter == 0 {
		maxIter = 1000
	}
	tol := opts.GradientTolerance
	if tol == 0 {
		tol = 1e-8
	}
	if maxIter < 0 || tol < 0 || math.IsNaN(tol) {
		return nil, fmt.Errorf("logreg: invalid options: MaxIterations %d, GradientTolerance %v", maxIter, tol)
	}
	problem := optimize.Problem{Func: obj.value, Grad: obj.gradient}
	settings := &optimize.Settings{
		GradientThreshold: tol,
		MajorIterations:   maxIter,
		Converger:         optimize.NeverTerminate{},
	}
	result, err := optimize.Minimize(problem, obj.start(), settings, &optimize.LBFGS{})
	if result == nil {
		return nil, fmt.Errorf("logreg: L-BFGS failed: %w", err)
	}
	// A line search can fail to improve a point that is already optimal to
	// floating-point precision; accept any end whose gradient is small.
	grad := make([]float64, len(result.X))
	obj.gradient(grad, result.X)
	if g := floats.Norm(grad, math.Inf(1)); g > math.Max(tol, stalledTolerance) {
		return nil, fmt.Errorf("logreg: L-BFGS stopped (%v, %v) after %d iterations with gradient norm %.3g > %.3g",
			result.Status, err, result.Stats.MajorIterations, g, tol)
	}
	return &Model{
		Intercept:  result.X[0],
		Coef:       append([]float64(nil), result.X[1:]...),
		Iterations: result.Stats.MajorIterations,
	}, nil
}

// stalledTolerance is the largest gradient component accepted when L-BFGS
// stops before GradientTolerance is reached (line-search failure near the
// optimum).
const stalledTolerance = 1e-6

// objective is the mean penalised log-loss
//
//	f(β) = (1/n)·Σ_i [log(1+e^{z_i}) − y_i·z_i] + ‖w‖²/(2Cn),  z_i = β_0 + w·x_i,
//
// scikit-learn's objective divided by C·n, with β = (β_0, w). Its gradient
// is (1/n)·Σ_i (σ(z_i) − y_i)·(1, x_i) + (0, w)/(Cn).
type objective struct {
	n, d    int
	x       []float64 // n×d, row-major
	y       []float64
	penalty float64 // 1/(C·n), 0 without penalty
	// cache of the last evaluation, as L-BFGS asks for value and gradient
	// at the same point.
	at, grad []float64
	val      float64
}

// newObjective validates X, y and C and copies X into row-major storage.
func newObjective(X [][]float64, y []int, c float64) (*objective, error) {
	if c == 0 {
		c = 1
	}
	if !(c > 0) {
		return nil, fmt.Errorf("logreg: C = %v, must be positive", c)
	}
	n := len(X)
	if n == 0 {
		return nil, errors.New("logreg: no training rows")
	}
	if len(y) != n {
		return nil, fmt.Errorf("logreg: %d rows but %d labels", n, len(y))
	}
	d := len(X[0])
	if d == 0 {
		return nil, errors.New("logreg: rows have no features")
	}
	o := &objective{n: n, d: d, x: make([]float64, 0, n*d), y: make([]float64, n), penalty: 1 / (c * float64(n))}
	var positives int
	for i, row := range X {
		if len(row) != d {
			return nil, fmt.Errorf("logreg: row %d has %d features, row 0 has %d", i, len(row), d)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("logreg: row %d feature %d is %v", i, j, v)
			}
		}
		o.x = append(o.x, row...)
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

// start returns the initial point: w = 0 and the intercept fitting the
// class frequency, the optimum of the intercept-only model.
func (o *objective) start() []float64 {
	var positives float64
	for _, v := range o.y {
		positives += v
	}
	beta := make([]float64, o.d+1)
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

// evaluate computes value and gradient at beta unless they are cached.
func (o *objective) evaluate(beta []float64) {
	if o.at != nil && slices.Equal(o.at, beta) {
		return
	}
	if o.at == nil {
		o.at = make([]float64, o.d+1)
		o.grad = make([]float64, o.d+1)
	}
	copy(o.at, beta)
	clear(o.grad)
	w := beta[1:]
	gw := o.grad[1:]
	var loss float64
	for i := range o.n {
		row := o.x[i*o.d : (i+1)*o.d]
		z := beta[0]
		for j, v := range row {
			z += w[j] * v
		}
		loss += softplus(z) - o.y[i]*z
		r := sigmoid(z) - o.y[i]
		o.grad[0] += r
		for j, v := range row {
			gw[j] += r * v
		}
	}
	invN := 1 / float64(o.n)
	var norm2 float64
	for j, v := range w {
		norm2 += v * v
		gw[j] = gw[j]*invN + o.penalty*v
	}
	o.grad[0] *= invN
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
