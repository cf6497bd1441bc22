package logreg

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// generate draws n rows of d standard normal features and labels from the
// logistic model with the given intercept and coefficients.
func generate(n int, intercept float64, coef []float64, seed uint64) ([][]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := make([][]float64, n)
	y := make([]int, n)
	for i := range X {
		X[i] = make([]float64, len(coef))
		z := intercept
		for j := range coef {
			X[i][j] = rng.NormFloat64()
			z += coef[j] * X[i][j]
		}
		if rng.Float64() < sigmoid(z) {
			y[i] = 1
		}
	}
	return X, y
}

// newDenseObjective is newObjective on the rows of X.
func newDenseObjective(X [][]float64, y []int, c float64) (*objective, error) {
	return newObjective(len(X), func(i int, _ []float64) ([]float64, error) { return X[i], nil }, y, c)
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	X, y := generate(300, 0.3, []float64{1, -0.5, 2, 0}, 1)
	for _, c := range []float64{0.05, 1, math.Inf(1)} {
		obj, err := newDenseObjective(X, y, c)
		if err != nil {
			t.Fatal(err)
		}
		beta := []float64{-0.2, 0.7, 0.1, -1.3, 0.4}
		grad := make([]float64, len(beta))
		obj.gradient(grad, beta)
		const h = 1e-6
		for k := range beta {
			plus := append([]float64(nil), beta...)
			minus := append([]float64(nil), beta...)
			plus[k] += h
			minus[k] -= h
			numeric := (obj.value(plus) - obj.value(minus)) / (2 * h)
			// Central differences err by O(h²·f''') + O(ε_mach·f/h) ≈ 1e-9.
			if math.Abs(numeric-grad[k]) > 1e-7 {
				t.Errorf("C=%v: ∂f/∂β_%d = %.10f, finite difference %.10f", c, k, grad[k], numeric)
			}
		}
	}
}

func TestHessianMatchesFiniteDifferences(t *testing.T) {
	X, y := generate(300, 0.3, []float64{1, -0.5, 2, 0}, 5)
	X[0][1] = 0 // exercise the sparse storage
	obj, err := newDenseObjective(X, y, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	beta := []float64{-0.2, 0.7, 0.1, -1.3, 0.4}
	hess := mat.NewSymDense(len(beta), nil)
	obj.hessian(hess, beta)
	const h = 1e-5
	plus, minus := make([]float64, len(beta)), make([]float64, len(beta))
	for k := range beta {
		b := append([]float64(nil), beta...)
		b[k] += h
		obj.gradient(plus, b)
		b[k] -= 2 * h
		obj.gradient(minus, b)
		for j := range beta {
			numeric := (plus[j] - minus[j]) / (2 * h)
			if math.Abs(numeric-hess.At(j, k)) > 1e-7 {
				t.Errorf("∂²f/∂β_%d∂β_%d = %.10f, finite difference %.10f", j, k, hess.At(j, k), numeric)
			}
		}
	}
}

// standardErrors returns √diag((X̃ᵀ W X̃)⁻¹), X̃ = (1, X), W = diag(p(1−p)) at
// the fitted model: the asymptotic standard errors of the maximum
// likelihood estimate.
func standardErrors(t *testing.T, m *Model, X [][]float64) []float64 {
	d := len(m.Coef) + 1
	info := mat.NewSymDense(d, nil)
	row := make([]float64, d)
	for _, x := range X {
		p := m.Predict(x)
		row[0] = 1
		copy(row[1:], x)
		info.SymRankOne(info, p*(1-p), mat.NewVecDense(d, row))
	}
	var cov mat.Dense
	if err := cov.Inverse(info); err != nil {
		t.Fatal(err)
	}
	se := make([]float64, d)
	for j := range se {
		se[j] = math.Sqrt(cov.At(j, j))
	}
	return se
}

func TestFitRecoversCoefficients(t *testing.T) {
	trueIntercept, trueCoef := -0.5, []float64{1, -2, 0.5, 0}
	X, y := generate(20000, trueIntercept, trueCoef, 2)
	m, err := Fit(X, y, Options{C: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	se := standardErrors(t, m, X)
	truth := append([]float64{trueIntercept}, trueCoef...)
	fit := append([]float64{m.Intercept}, m.Coef...)
	for j := range truth {
		// The MLE is asymptotically normal around the truth with these
		// standard errors (≈0.02–0.04 here), so a factor-2 error in any
		// coefficient would be ≥ 10 standard errors off.
		if z := (fit[j] - truth[j]) / se[j]; math.Abs(z) > 5 {
			t.Errorf("β_%d = %.4f, truth %.4f, %.1f standard errors (se %.4f)", j, fit[j], truth[j], z, se[j])
		}
	}
}

func TestFitPenalisedIsStationary(t *testing.T) {
	// With few rows the penalty matters: check the optimality condition
	// Σ_i (p_i − y_i)·x_ij + w_j/C = 0 directly, in scikit-learn's scaling,
	// and that the penalty shrinks the coefficients.
	X, y := generate(200, 0.5, []float64{1.5, -1, 0.5}, 3)
	const c = 0.1
	m, err := Fit(X, y, Options{C: c})
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, len(m.Coef)+1)
	for i, x := range X {
		r := m.Predict(x) - float64(y[i])
		grad[0] += r
		floats.AddScaled(grad[1:], r, x)
	}
	floats.AddScaled(grad[1:], 1/c, m.Coef)
	// Fit stops when the mean gradient is below 1e-8 (1e-6 on a stalled
	// line search); the sum is n = 200 times larger.
	if g := floats.Norm(grad, math.Inf(1)); g > 200*1e-6 {
		t.Errorf("gradient of C·Σloss + ‖w‖²/2 at the fit is %v, want 0", grad)
	}
	mle, err := Fit(X, y, Options{C: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	if floats.Norm(m.Coef, 2) >= floats.Norm(mle.Coef, 2) {
		t.Errorf("penalised ‖w‖ = %.4f is not below the unpenalised %.4f", floats.Norm(m.Coef, 2), floats.Norm(mle.Coef, 2))
	}
}

func TestPredictIsStableAtExtremes(t *testing.T) {
	m := &Model{Intercept: 0, Coef: []float64{1}}
	for _, tc := range []struct{ x, want float64 }{{800, 1}, {-800, 0}, {0, 0.5}} {
		if got := m.Predict([]float64{tc.x}); got != tc.want {
			t.Errorf("Predict(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	for _, z := range []float64{-800, -30, 0, 30, 800} {
		if got, want := softplus(z), math.Max(z, 0)+math.Log1p(math.Exp(-math.Abs(z))); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(z)) {
			t.Errorf("softplus(%v) = %v, want %v", z, got, want)
		}
	}
}

func TestFitErrors(t *testing.T) {
	X := [][]float64{{1}, {2}, {3}}
	for _, tc := range []struct {
		name string
		X    [][]float64
		y    []int
		opts Options
		want string
	}{
		{"no rows", nil, nil, Options{}, "no training rows"},
		{"labels", X, []int{0, 1}, Options{}, "3 rows but 2 labels"},
		{"no features", [][]float64{{}, {}}, []int{0, 1}, Options{}, "no features"},
		{"ragged", [][]float64{{1}, {2, 3}}, []int{0, 1}, Options{}, "row 1 has 2 features"},
		{"nan", [][]float64{{1}, {math.NaN()}}, []int{0, 1}, Options{}, "row 1 feature 0 is NaN"},
		{"label 2", X, []int{0, 2, 1}, Options{}, "label 2 of row 1"},
		{"one class", X, []int{1, 1, 1}, Options{}, "both classes"},
		{"negative C", X, []int{0, 1, 1}, Options{C: -1}, "C = -1"},
		{"bad tolerance", X, []int{0, 1, 1}, Options{GradientTolerance: -1}, "invalid options"},
	} {
		_, err := Fit(tc.X, tc.y, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestFitReportsNonConvergence(t *testing.T) {
	X, y := generate(500, 0.5, []float64{1.5, -1, 0.5}, 4)
	_, err := Fit(X, y, Options{MaxIterations: 1})
	if err == nil || !strings.Contains(err.Error(), "gradient norm") {
		t.Errorf("one Newton iteration: error %v, want a non-convergence error", err)
	}
}

func TestFitSeparableWithPenalty(t *testing.T) {
	// Separated classes have no maximum likelihood estimate; the penalty
	// makes the optimum finite: for C = 1 and these four points,
	// w ≈ 1.2 (the optimality condition Σ(p_i − y_i)x_i + w = 0 holds).
	X := [][]float64{{-2}, {-1}, {1}, {2}}
	y := []int{0, 0, 1, 1}
	m, err := Fit(X, y, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var g float64
	for i, x := range X {
		g += (m.Predict(x) - float64(y[i])) * x[0]
	}
	if g += m.Coef[0]; math.Abs(g) > 4e-6 || math.Abs(m.Intercept) > 1e-6 {
		t.Errorf("w = %v, b = %v: optimality residual %v, want 0 and b = 0 by symmetry", m.Coef[0], m.Intercept, g)
	}
}
