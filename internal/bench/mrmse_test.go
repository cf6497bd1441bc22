package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// TestAlphaErrors checks the α-mRMSE columns of every mechanism: the
// exact α = 0 prefix value is √ of the largest PrefixVariance, the exact
// node value agrees with a Monte-Carlo estimate of the largest node
// variance, the error falls as α grows, and the smoothed relative error
// respects Lemma B.1 for the Monte-Carlo columns.
func TestAlphaErrors(t *testing.T) {
	hist, err := synthetic.PoissonHistogram(1, 48, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tree", "kary", "cascade", "gaussian-tree", "partitioned"} {
		delta := 1e-6
		if name == "partitioned" {
			delta = 0
		}
		m, err := mechanism.New(mechanism.Params{Name: name, Bins: 48, Epsilon: 1, Delta: delta})
		if err != nil {
			t.Fatal(err)
		}
		const runs = 500
		got, tau, err := alphaErrors(m, hist, []float64{0, 1e-12, 0.1, 0.5}, runs, 0, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if tau != 1 {
			t.Errorf("%s: τ = %v for n < 1000", name, tau)
		}
		maxVar := 0.0
		for i := 1; i <= m.Bins(); i++ {
			maxVar = max(maxVar, m.PrefixVariance(i))
		}
		if !got[0].PrefixExact || math.Abs(got[0].Prefix-math.Sqrt(maxVar)) > 1e-9*math.Sqrt(maxVar) {
			t.Errorf("%s: prefix α=0 %v (exact %v), want √%v", name, got[0].Prefix, got[0].PrefixExact, maxVar)
		}
		if got[0].NodeExact != (name != "cascade") {
			t.Errorf("%s: node α=0 exact %v", name, got[0].NodeExact)
		}
		// α = 10⁻¹² is Monte-Carlo and forgives nothing: it estimates the
		// exact α = 0 value, each node's MSE with relative s.e. at most
		// √(Var(X²)/runs)/σ² ≤ √(5/runs) for these laws.
		if tol := 6 * math.Sqrt(5.0/runs); math.Abs(got[1].Node/got[0].Node-1) > tol {
			t.Errorf("%s: node RMSE exact %v, Monte-Carlo %v", name, got[0].Node, got[1].Node)
		}
		if got[3].Node > got[2].Node || got[2].Node > got[1].Node {
			t.Errorf("%s: node α-mRMSE %v, %v, %v not falling in α", name, got[1].Node, got[2].Node, got[3].Node)
		}
		for _, e := range got {
			if e.NodeSRE > e.NodeSREBound*(1+1e-12) && (name != "cascade" || e.Alpha > 0) {
				t.Errorf("%s: α=%v: smoothed relative error %v above its bound %v", name, e.Alpha, e.NodeSRE, e.NodeSREBound)
			}
		}
		for _, e := range got[1:] {
			if e.NodeExact || e.PrefixExact {
				t.Errorf("%s: α=%v: %+v", name, e.Alpha, e)
			}
		}
	}
}

// TestAccuracyAlphaColumns checks that Accuracy fills the α columns when
// asked and only then.
func TestAccuracyAlphaColumns(t *testing.T) {
	cfg := AccuracyConfig{Bins: []int{32}, Epsilons: []float64{1}, Delta: 1e-6,
		Mechanisms: []string{"tree", "cascade"}, Runs: 4, Seed: 1}
	rows, err := Accuracy(cfg, nil)
	if err != nil || rows[0].Alpha != nil {
		t.Fatalf("no alphas: %v, %+v", err, rows)
	}
	cfg.Alphas = []float64{0, 0.1}
	rows, err = Accuracy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r.Alpha) != 2 || r.AlphaData != "X_pois(1)" || r.Alpha[0].Node <= 0 || r.Alpha[1].Alpha != 0.1 {
			t.Errorf("%s: %+v", r.Mechanism, r)
		}
	}
}
