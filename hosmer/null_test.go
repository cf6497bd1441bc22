package hosmer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// calibrated returns n parties whose probabilities are Beta(2, 5) and
// labels Bernoulli(p): a calibrated model, on a linear grid of nBins.
func calibrated(t *testing.T, n, nBins int, r *rand.Rand) (*ecdf.Grid, []*party.Party) {
	t.Helper()
	g, _ := ecdf.NewLinearGrid(0, 1, nBins)
	parties := make([]*party.Party, n)
	for j := range parties {
		// Beta(2, 5) as the 2nd smallest of 6 uniforms.
		var u [6]float64
		for k := range u {
			u[k] = r.Float64()
		}
		p := secondSmallest(u[:])
		y := 0
		if r.Float64() < p {
			y = 1
		}
		pt, err := party.New(party.Instance{Score: p, Label: y, Probability: p, HasProbability: true}, g)
		if err != nil {
			t.Fatal(err)
		}
		parties[j] = pt
	}
	return g, parties
}

func secondSmallest(u []float64) float64 {
	a, b := math.Inf(1), math.Inf(1)
	for _, v := range u {
		switch {
		case v < a:
			a, b = v, a
		case v < b:
			b = v
		}
	}
	return b
}

func release(t *testing.T, plan *Plan, g *ecdf.Grid, parties []*party.Party) (aggregation.UStat, []*aggregation.Release) {
	t.Helper()
	u, err := curator.New("hl", g.Len(), parties, ledger.Budget{Epsilon: plan.Epsilon}, ledger.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	rels, err := plan.Create(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return u, rels
}

// At a huge ε the release is exact, so the groups are fixed and H* of the
// grid plan is Σ_g (O_g − E_g)²·n_g/(E_g(n_g − E_g)) with O_g a sum of
// independent Binomial(c_i, m_i): its exact mean is
// Σ_g Σ_{i∈g} c_i m_i(1 − m_i) · n_g/(E_g(n_g − E_g)) (≈ G, the χ²_G of a
// fixed, not fitted, model — not χ²_{G−2}), and its variance about 2G.
// The bootstrap's mean H* must be within 4 standard errors √(2G/B) of it,
// and the naive χ²_{G−2} mean G − 2 must lie outside that band.
func TestNullTestNoiseFreeMatchesTheory(t *testing.T) {
	const n, nBins, draws = 4000, 64, 2000
	r := rand.New(rand.NewPCG(7, 8))
	g, parties := calibrated(t, n, nBins, r)
	plan, err := GridPlan(1<<40, nBins, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	u, rels := release(t, plan, g, parties)
	cfg := Config{Bins: nBins, Reports: n, MinExpected: 1}
	res, err := plan.Evaluate(context.Background(), u, rels, g, "l2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := newNullModel(res, g, cfg)
	var mean float64
	for _, gr := range res.Groups {
		var v float64
		for i := gr.First; i <= gr.Last; i++ {
			c := float64(m.prefix[i-1])
			if i > 1 {
				c -= float64(m.prefix[i-2])
			}
			v += c * m.probs[i-1] * (1 - m.probs[i-1])
		}
		mean += v * gr.Size / (gr.Expected * (gr.Size - gr.Expected))
	}
	var sum float64
	for b := range draws {
		h, err := m.draw(plan, rels, g, "l2", cfg, 1, uint64(b))
		if err != nil {
			t.Fatal(err)
		}
		sum += h
	}
	G := float64(len(res.Groups))
	se := math.Sqrt(2 * G / draws)
	got := sum / draws
	if math.Abs(got-mean) > 4*se {
		t.Errorf("mean H* %.3f, theory %.3f ± %.3f (4 s.e.)", got, mean, 4*se)
	}
	if math.Abs(G-2-mean) < 4*se {
		t.Errorf("theory mean %.3f cannot tell χ²_G from χ²_{G−2} (G = %v)", mean, G)
	}
	nt, err := plan.NullTest(rels, g, "l2", cfg, res, 99, 3)
	if err != nil || nt.Draws != 99 || !(nt.PValue > 0 && nt.PValue <= 1) || math.Abs(nt.StdErr-math.Sqrt(nt.PValue*(1-nt.PValue)/99)) > 1e-12 {
		t.Errorf("NullTest = %+v, %v", nt, err)
	}
	again, _ := plan.NullTest(rels, g, "l2", cfg, res, 99, 3)
	if again == nil || *again != *nt {
		t.Errorf("NullTest not deterministic in its seed: %+v then %+v", nt, again)
	}
}

// At ε = 1 on data drawn from a calibrated model, the bootstrap p-value
// is (close to) Uniform: over 200 data sets the rejection rate at
// α = 0.1 lies within 4 binomial standard errors √(0.1·0.9/200) ≈ 0.021
// of 0.1, where the naive χ² p-value rejects far more often. The release
// noise is not seeded, so now and then it leaves a group of n = 1000
// without expected positives (H undefined): such data sets are drawn
// again, and must stay rare.
func TestNullTestUniformUnderNull(t *testing.T) {
	const n, nBins, sets, draws, alpha = 1000, 32, 200, 19, 0.1
	if testing.Short() {
		t.Skip("200 private releases")
	}
	r := rand.New(rand.NewPCG(11, 12))
	plan, err := GridPlan(1, nBins, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Bins: nBins, Reports: n, MinExpected: 1}
	var rejected, naive, undefined int
	for k := 0; k < sets; k++ {
		g, parties := calibrated(t, n, nBins, r)
		u, rels := release(t, plan, g, parties)
		res, err := plan.Evaluate(context.Background(), u, rels, g, "l2", cfg)
		if errors.Is(err, ErrUndefined) && undefined < sets/20 {
			undefined++
			k--
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		nt, err := plan.NullTest(rels, g, "l2", cfg, res, draws, uint64(k))
		if err != nil {
			t.Fatal(err)
		}
		if nt.PValue <= alpha {
			rejected++
		}
		if res.PValue <= alpha {
			naive++
		}
	}
	rate, se := float64(rejected)/sets, math.Sqrt(alpha*(1-alpha)/sets)
	if math.Abs(rate-alpha) > 4*se {
		t.Errorf("bootstrap rejects %d of %d calibrated data sets at α = %v (rate %.3f, want %v ± %.3f)", rejected, sets, alpha, rate, alpha, 4*se)
	}
	if float64(naive)/sets < alpha+4*se {
		t.Errorf("naive χ² rejects only %d of %d: the test cannot tell the two apart", naive, sets)
	}
	t.Logf("α = %v: bootstrap rejects %d/%d, naive χ² %d/%d", alpha, rejected, sets, naive, sets)
}
