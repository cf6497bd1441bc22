package hosmer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// Three groups on a grid of 6 bins, bounds 2, 4, 6, worked by hand:
//
//	A (bins 1–2): 4 instances, O1 = 1, E1 = 2:    (1−2)²/2 + (3−2)²/2       = 1
//	B (bins 3–4): 5 instances, O1 = 4, E1 = 2.5:  1.5²/2.5 + 1.5²/2.5       = 1.8
//	C (bins 5–6): 2 instances, O1 = 0, E1 = 0.5:  0.5²/0.5 + 0.5²/1.5       = 2/3
//
// H = 3.4667 with 1 degree of freedom: p = erfc(√(H/2)).
func TestStatisticHandExample(t *testing.T) {
	bins := []int{1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 6}
	labels := []int{1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0}
	probs := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25}
	groups, err := Exact(bins, labels, probs, []int{2, 4, 6})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Statistic(groups)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 1.8 + 2.0/3; math.Abs(h-want) > 1e-12 {
		t.Errorf("H = %v, want %v", h, want)
	}
	p, err := PValue(h, len(groups))
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Erfc(math.Sqrt(h / 2)); math.Abs(p-want) > 1e-9 {
		t.Errorf("p-value %v, want %v", p, want)
	}
}

// data draws n predicted probabilities (logistic of a normal score) and
// labels from a miscalibrated truth, binned on a linear grid of nBins.
func data(n, nBins int, seed uint64) (g *ecdf.Grid, bins, labels []int, probs []float64) {
	g, _ = ecdf.NewLinearGrid(0, 1, nBins)
	r := rand.New(rand.NewPCG(seed, 2))
	for range n {
		s := r.NormFloat64()
		p := 1 / (1 + math.Exp(-s))
		y := 0
		if r.Float64() < 1/(1+math.Exp(-1.3*s-0.2)) {
			y = 1
		}
		b, _ := g.Bin(p)
		bins, labels, probs = append(bins, b), append(labels, y), append(probs, p)
	}
	return g, bins, labels, probs
}

// exactSource answers every component with the exact prefix sums.
type exactSource struct{ prefix [4][]float64 }

func newExactSource(bins, labels []int, probs []float64, nBins int) *exactSource {
	s := &exactSource{}
	for c := range s.prefix {
		s.prefix[c] = make([]float64, nBins)
	}
	for j, b := range bins {
		y := float64(labels[j])
		for c, w := range [4]float64{1, y, 1 - y, probs[j]} {
			s.prefix[c][b-1] += w
		}
	}
	for c := range s.prefix {
		for i := 1; i < nBins; i++ {
			s.prefix[c][i] += s.prefix[c][i-1]
		}
	}
	return s
}

func (s *exactSource) Prefixes(c core.Component, bins []int) ([]float64, error) {
	v := make([]float64, len(bins))
	for j, b := range bins {
		v[j] = s.prefix[c][b-1]
	}
	return v, nil
}

func TestNoiseFreeEqualsTextbook(t *testing.T) {
	const n, nBins, q = 3000, 256, 10
	_, bins, labels, probs := data(n, nBins, 1)
	src := newExactSource(bins, labels, probs, nBins)
	for _, fromLabels := range []bool{false, true} {
		res, err := Private(src, Config{Bins: nBins, Reports: n, Groups: q, CountFromLabels: fromLabels})
		if err != nil {
			t.Fatal(err)
		}
		// The boundaries are the grid deciles: b_q is the bin of the
		// ⌈qn/Q⌉-th smallest instance.
		sorted := append([]int(nil), bins...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if sorted[j] < sorted[i] {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		if len(res.Boundaries) != q {
			t.Fatalf("%d groups, want %d", len(res.Boundaries), q)
		}
		for k := 1; k < q; k++ {
			if want := sorted[(k*n+q-1)/q-1]; res.Boundaries[k-1] != want {
				t.Errorf("boundary %d: bin %d, want %d", k, res.Boundaries[k-1], want)
			}
		}
		groups, err := Exact(bins, labels, probs, res.Boundaries)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Statistic(groups)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.H-want) > 1e-9*want {
			t.Errorf("count from labels %v: H = %v, textbook %v", fromLabels, res.H, want)
		}
		if p, _ := PValue(want, q); math.Abs(res.PValue-p) > 1e-12 {
			t.Errorf("p-value %v, want %v", res.PValue, p)
		}
	}
}

// Through the trusted-curator UStat, with each plan's releases at a huge
// ε (noise zero with overwhelming probability), Private gives the
// textbook statistic up to the 2^−32 fixed point of probabilities.
func TestPlansThroughUStat(t *testing.T) {
	const n, nBins = 800, 64
	g, bins, labels, probs := data(n, nBins, 5)
	var parties []*party.Party
	for j := range bins {
		p, err := party.New(party.Instance{Score: probs[j], Label: labels[j], Probability: probs[j], HasProbability: true}, g)
		if err != nil {
			t.Fatal(err)
		}
		parties = append(parties, p)
	}
	ctx := context.Background()
	for _, mk := range []func(float64, int, mechanism.Params) (*Plan, error){PaperPlan, JointPlan} {
		plan, err := mk(1<<48, nBins, mechanism.Params{Name: "tree"})
		if err != nil {
			t.Fatal(err)
		}
		u, err := curator.New("hl", nBins, parties, ledger.Budget{Epsilon: plan.Epsilon}, ledger.NewMemory())
		if err != nil {
			t.Fatal(err)
		}
		rels, err := plan.Create(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", plan.Name, err)
		}
		res, err := plan.Evaluate(ctx, u, rels, g, "none", Config{Bins: nBins, Reports: n})
		if err != nil {
			t.Fatalf("%s: %v", plan.Name, err)
		}
		// The noise variance at ε = 2^48 is ~2^-90: debiasing is a no-op.
		deb, err := plan.Evaluate(ctx, u, rels, g, "none", Config{Bins: nBins, Reports: n, Debias: true})
		if err != nil || math.Abs(deb.H-res.H) > 1e-9*res.H {
			t.Errorf("%s plan: debiased H %v (%v), raw %v", plan.Name, deb, err, res.H)
		}
		groups, _ := Exact(bins, labels, probs, res.Boundaries)
		want, _ := Statistic(groups)
		if math.Abs(res.H-want) > 1e-6*want {
			t.Errorf("%s plan: H = %v, textbook %v", plan.Name, res.H, want)
		}
		if _, err := plan.Evaluate(ctx, u, append(rels, rels[0]), g, "none", Config{Bins: nBins, Reports: n}); err == nil {
			t.Errorf("%s plan: Evaluate accepted one release too many", plan.Name)
		}
	}
}

func TestPlans(t *testing.T) {
	paper, err := PaperPlan(1, 1024, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	// L = 10: ε' = 1/19; count at 11/19, {Label, Probability} at 4/19 each.
	if got := paper.Releases[0].Mechanism.Epsilon; math.Abs(got-11.0/19) > 1e-15 {
		t.Errorf("paper count release ε = %v, want 11/19", got)
	}
	if got := paper.Releases[1].Mechanism.Epsilon; math.Abs(got-4.0/19) > 1e-15 {
		t.Errorf("paper group release ε = %v per component, want 4/19", got)
	}
	joint, err := JointPlan(1, 1024, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	if r := joint.Releases[0]; r.Mechanism.Epsilon != 0.5 || len(r.Components) != 3 || !joint.CountFromLabels {
		t.Errorf("joint plan %+v", joint)
	}
	for _, plan := range []*Plan{paper, joint} {
		if got := ledgerCharge(t, plan); math.Abs(got-plan.Epsilon) > 1e-12 {
			t.Errorf("%s plan: the ledger charges ε = %v, want its ε = %v", plan.Name, got, plan.Epsilon)
		}
	}
	if _, err := JointPlan(1, 1024, mechanism.Params{Name: "cascade", Delta: 1e-9}); err == nil {
		t.Error("joint plan accepted an (ε, δ) mechanism")
	}
	if _, err := PaperPlan(0, 1024, mechanism.Params{}); err == nil {
		t.Error("ε = 0 accepted")
	}
}

func TestErrors(t *testing.T) {
	if _, err := Statistic([]Group{{First: 1, Last: 2, Size: 3, Positives: 1, Expected: 0}}); err == nil {
		t.Error("zero expected positives accepted")
	}
	if _, err := Statistic([]Group{{First: 1, Last: 2, Size: 3, Positives: 1, Expected: 3}}); err == nil {
		t.Error("zero expected negatives accepted")
	}
	if _, err := PValue(1, 2); err == nil {
		t.Error("2 groups (0 degrees of freedom) accepted")
	}
	if _, err := Exact([]int{1}, []int{2}, []float64{0.5}, []int{4}); err == nil {
		t.Error("label 2 accepted")
	}
	if _, err := Exact([]int{5}, []int{1}, []float64{0.5}, []int{4}); err == nil {
		t.Error("bin beyond the last boundary accepted")
	}
	if _, err := Exact([]int{1}, []int{1}, []float64{1.5}, []int{4}); err == nil {
		t.Error("probability 1.5 accepted")
	}
	if _, err := FromPrefixes([]int{2, 1}, []float64{1, 2}, []float64{1, 2}, []float64{1, 2}); err == nil {
		t.Error("decreasing boundaries accepted")
	}
	if _, err := Boundaries(nil, 10); err == nil {
		t.Error("empty ECDF accepted")
	}
	if _, err := Private(&exactSource{}, Config{Bins: 0, Reports: 1}); err == nil {
		t.Error("zero bins accepted")
	}
}

func TestClip(t *testing.T) {
	g := Group{Size: 10, Positives: -2, Expected: 0.1}
	clip(&g, 0.5)
	if g.Positives != 0 || g.Expected != 0.5 {
		t.Errorf("clipped to %+v", g)
	}
	g = Group{Size: 10, Positives: 12, Expected: 9.9}
	clip(&g, 0.5)
	if g.Positives != 10 || g.Expected != 9.5 {
		t.Errorf("clipped to %+v", g)
	}
	g = Group{Size: -1, Positives: 1, Expected: 1}
	clip(&g, 0.5)
	if g.Size != 0 || g.Positives != 0 || g.Expected != 0 {
		t.Errorf("clipped to %+v", g)
	}
}

// ledgerCharge creates plan's releases on an aggregation with an ample
// budget and returns what its ledger charged.
func ledgerCharge(t *testing.T, plan *Plan) float64 {
	t.Helper()
	book := ledger.NewMemory()
	u, err := curator.New("hl", plan.Releases[0].Mechanism.Bins, nil, ledger.Budget{Epsilon: 10 * plan.Epsilon, Delta: 1}, book)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range plan.Releases {
		if _, err := u.NewRelease(context.Background(), spec); err != nil {
			t.Fatalf("%s plan: %v", plan.Name, err)
		}
	}
	spent, err := book.Spent("hl")
	if err != nil {
		t.Fatal(err)
	}
	return spent.Epsilon
}

func TestResultFinite(t *testing.T) {
	h, p := (&Result{H: 3.5, PValue: math.NaN()}).Finite()
	if h == nil || *h != 3.5 || p != nil {
		t.Errorf("Finite() = %v, %v; want 3.5, nil", h, p)
	}
	if h, _ := (&Result{H: math.Inf(1)}).Finite(); h != nil {
		t.Errorf("infinite H gave %v", *h)
	}
}
