package deploy

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// calibratedInstances returns n seeded instances of a calibrated model:
// probability p = score uniform on [0, 1), label y ~ Bernoulli(p).
func calibratedInstances(n int, seed uint64) []party.Instance {
	rng := rand.New(rand.NewPCG(seed, 11))
	inst := make([]party.Instance, n)
	for k := range inst {
		p := rng.Float64()
		y := 0
		if rng.Float64() < p {
			y = 1
		}
		inst[k] = party.Instance{Score: p, Label: y, Probability: p, HasProbability: true}
	}
	return inst
}

// submitAll uploads inst through one party host.
func (d *deployment) submitAll(inst []party.Instance) {
	d.t.Helper()
	p := d.newParty()
	for _, x := range inst {
		if _, err := p.Submit(context.Background(), x); err != nil {
			d.t.Fatal(err)
		}
	}
}

// hosmerOf runs the deployment's Hosmer–Lemeshow query.
func (d *deployment) hosmerOf(plan, method string, groups int) (*analyst.Hosmer, error) {
	d.t.Helper()
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		d.t.Fatal(err)
	}
	defer a.Close()
	return a.Hosmer(context.Background(), plan, method, groups, 0)
}

// spent checks that both servers' ledgers hold exactly ε.
func (d *deployment) checkSpent(epsilon float64) {
	d.t.Helper()
	for _, s := range []*Server{d.leader, d.helper} {
		spent, err := s.store.Spent(d.m.Dataset)
		if err != nil || math.Abs(spent.Epsilon-epsilon) > 1e-12*epsilon || spent.Delta != 0 {
			d.t.Fatalf("the %s spent %+v (%v), want ε=%g, δ=0", s.cfg.Role, spent, err, epsilon)
		}
	}
}

// exactHosmer is the textbook test of inst on the manifest's grid: groups
// at the quantiles of the exact histogram (hosmer.Boundaries), sums
// taken from the instances (hosmer.Exact).
func exactHosmer(t *testing.T, m *manifest.Manifest, inst []party.Instance, groups int) (*hosmer.Result, error) {
	t.Helper()
	g, err := m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	bins, labels, probs := make([]int, len(inst)), make([]int, len(inst)), make([]float64, len(inst))
	for k, x := range inst {
		if bins[k], err = g.Bin(x.Score); err != nil {
			t.Fatal(err)
		}
		labels[k], probs[k] = x.Label, x.Probability
	}
	hist, err := ecdf.Histogram(bins, g.Len())
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := hosmer.Boundaries(ecdf.ECDF(hist), groups)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := hosmer.Exact(bins, labels, probs, bounds)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hosmer.Statistic(gs)
	if err != nil {
		return nil, err
	}
	p, err := hosmer.PValue(h, len(gs))
	return &hosmer.Result{Boundaries: bounds, Groups: gs, H: h, PValue: p}, err
}

// At a huge ε the network test is the textbook one: same groups (cut at
// the exact quantiles), same sums, same H and p-value, for both plans;
// and each query charges exactly the plan's ε at both servers.
func TestHosmerOverTheNetworkExact(t *testing.T) {
	const n, groups = 150, 5
	d := newDeployment(t, hugeEpsilon, n)
	inst := calibratedInstances(n, 1)
	d.submitAll(inst)
	want, err := exactHosmer(t, d.m, inst, groups)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range want.Groups {
		// MinExpected clipping must not bind, or the comparison would
		// test the clipping instead.
		if floor := analysis.HosmerConfig(0, 0, 0).MinExpected; g.Expected < floor || g.Size-g.Expected < floor {
			t.Fatalf("exact group %+v has an expected count below %g: pick other instances", g, floor)
		}
	}
	for k, plan := range analysis.HosmerPlans {
		got, err := d.hosmerOf(plan, "l2", groups)
		if err != nil {
			t.Fatalf("%s plan: %v", plan, err)
		}
		d.checkSpent(float64(k+1) * hugeEpsilon)
		if got.Plan != plan || got.N != n || got.Epsilon != hugeEpsilon || got.Error != "" || got.Statistic == nil || got.PValueNaive == nil {
			t.Fatalf("%s plan: %+v", plan, got)
		}
		if len(got.Groups) != len(want.Groups) {
			t.Fatalf("%s plan: %d groups, exact %d", plan, len(got.Groups), len(want.Groups))
		}
		// Probabilities travel in fixed point with 32 fractional bits:
		// each Σp is exact to n·2^-33. The grid plan's E_1 is within half
		// a bin width per instance instead (hosmer.GridPlan).
		for j, w := range want.Groups {
			g := got.Groups[j]
			tol := n * 0x1p-32
			if plan == "grid" {
				tol += w.Size * 0.5 / bins
			}
			if g.First != w.First || g.Last != w.Last || g.Size != w.Size || g.Positives != w.Positives || math.Abs(g.Expected-w.Expected) > tol {
				t.Errorf("%s plan, group %d: %+v, exact %+v", plan, j+1, g, w)
			}
		}
		wantH, wantP := want.H, want.PValue
		if plan == "grid" { // the textbook statistic of the groups released
			wantH, _ = hosmer.Statistic(got.Groups)
			wantP, _ = hosmer.PValue(wantH, len(got.Groups))
		}
		if math.Abs(*got.Statistic-wantH) > 1e-6*wantH || math.Abs(*got.PValueNaive-wantP) > 1e-6 {
			t.Errorf("%s plan: H %v, p %v; exact H %v, p %v", plan, *got.Statistic, *got.PValueNaive, wantH, wantP)
		}
		if len(got.Releases) != len(got.ReleaseSpecs) || len(got.Releases) != map[string]int{"grid": 1, "joint": 1, "paper": 2}[plan] {
			t.Errorf("%s plan: releases %v, specs %v", plan, got.Releases, got.ReleaseSpecs)
		}
		if !strings.Contains(got.Guarantee, "under replace neighbours") || !strings.Contains(got.Guarantee, "each of 2 servers adds its own full-scale noise") {
			t.Errorf("%s plan: guarantee %q", plan, got.Guarantee)
		}
	}
}

// At ε = 1 with 120 parties the pipeline completes under every plan —
// a statistic with its p-value, or the documented undefined outcome —
// and the ledgers hold exactly the plans' ε (1 + 1 + 1).
func TestHosmerOverTheNetworkEpsilonOne(t *testing.T) {
	const n, groups = 120, 10
	d := newDeployment(t, 1, n)
	d.submitAll(calibratedInstances(n, 2))
	for k, plan := range analysis.HosmerPlans {
		got, err := d.hosmerOf(plan, "l2", groups)
		if err != nil {
			t.Fatalf("%s plan: %v", plan, err)
		}
		d.checkSpent(float64(k + 1))
		t.Logf("%s plan at ε = 1: H %v, p %v, %d groups, error %q", plan, deref(got.Statistic), deref(got.PValueNaive), len(got.Groups), got.Error)
		if got.Error != "" {
			if !strings.Contains(got.Error, hosmer.ErrUndefined.Error()) || got.Statistic != nil {
				t.Fatalf("%s plan: error %q with statistic %v", plan, got.Error, got.Statistic)
			}
			continue
		}
		if got.N != n || got.Statistic == nil || !(*got.Statistic >= 0) || len(got.Groups) < 1 || len(got.Groups) > groups {
			t.Fatalf("%s plan: %+v", plan, got)
		}
		if len(got.Groups) >= 3 && (got.PValueNaive == nil || !(*got.PValueNaive >= 0 && *got.PValueNaive <= 1)) {
			t.Fatalf("%s plan: p-value %v with %d groups", plan, got.PValueNaive, len(got.Groups))
		}
		var size float64
		for _, g := range got.Groups {
			size += g.Size
			if g.Positives < 0 || g.Positives > g.Size || g.Expected < 0 || g.Expected > g.Size {
				t.Errorf("%s plan: group %+v outside 0 ≤ O₁, E₁ ≤ size", plan, g)
			}
		}
		// The group sizes telescope to the released count at the last
		// bin. With counts from the two smoothed classes, scaled to the
		// public n, it lies in [0, n]; from the Count component (paper
		// plan) it is n plus the noise of prefix N, within 5 s.d.
		if lo, hi := countRange(t, plan, n); size < lo || size > hi {
			t.Errorf("%s plan: groups hold %v instances, want [%.4g, %.4g]", plan, size, lo, hi)
		}
	}
}

// Bad arguments are refused before any release: nothing is charged.
func TestHosmerRefusals(t *testing.T) {
	d := newDeployment(t, 1, 1)
	d.submitAll(calibratedInstances(1, 3))
	for _, c := range []struct {
		plan, method string
		groups       int
		want         string
	}{
		{"wishful", "l2", 10, `plan "wishful" is unknown`},
		{"joint", "l3", 10, `unknown smoothing method "l3"`},
		{"joint", "l2", 2, "number of groups 2"},
		{"paper", "l2", bins + 1, "number of groups 65"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if _, err := d.hosmerOf(c.plan, c.method, c.groups); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("plan %q, smoothing %q, %d groups: %v, want %q", c.plan, c.method, c.groups, err, c.want)
			}
		})
	}
	d.checkSpent(0)
}

// The joint plan's refusal of δ > 0 points to the paper plan, and only
// replace-one manifests are accepted.
func TestHosmerPlanChoice(t *testing.T) {
	unit, _ := ecdf.NewLinearGrid(0, 1, bins)
	gauss := mechanism.Params{Name: "gaussian-tree", Bins: bins, Epsilon: 1, Delta: 1e-6, Relation: mechanism.ReplaceOne}
	if _, err := analyst.HosmerPlan("joint", gauss, 10, unit); err == nil || !strings.Contains(err.Error(), "use the grid or paper plan") {
		t.Errorf("joint plan with δ > 0: %v", err)
	}
	for _, name := range []string{"grid", "paper"} {
		if p, err := analyst.HosmerPlan(name, gauss, 10, unit); err != nil || p.Epsilon != 1 {
			t.Errorf("%s plan with δ > 0: %v, %v", name, p, err)
		}
	}
	tree := mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: mechanism.ReplaceOne}
	if p, err := analyst.HosmerPlan("", tree, 10, unit); err != nil || p.Name != "grid" {
		t.Errorf("default plan: %v, %v", p, err)
	}
	scores, _ := ecdf.NewLinearGrid(-5, 5, bins)
	if _, err := analyst.HosmerPlan("grid", tree, 10, scores); err == nil || !strings.Contains(err.Error(), "not within [0, 1]") {
		t.Errorf("grid plan on a grid over [-5, 5]: %v", err)
	}
	tree.Relation = mechanism.AddRemove
	if _, err := analyst.HosmerPlan("joint", tree, 10, unit); err == nil || !strings.Contains(err.Error(), "replace neighbours only") {
		t.Errorf("add-remove manifest: %v", err)
	}
}

// deref returns *v, or NaN for nil.
func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// The grid plan's test of an existing ROC release costs nothing more and,
// at huge ε, gives the groups the grid plan gives on a new release.
func TestHosmerFromROCRelease(t *testing.T) {
	const n, groups = 150, 5
	d := newDeployment(t, hugeEpsilon, n)
	d.submitAll(calibratedInstances(n, 1))
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	r, err := a.ROC(ctx, "l2")
	if err != nil {
		t.Fatal(err)
	}
	id, err := analyst.ParseReleaseID(r.Stored.Release)
	if err != nil {
		t.Fatal(err)
	}
	free, err := a.HosmerRelease(ctx, id, "l2", groups, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.checkSpent(hugeEpsilon)
	again, err := a.HosmerRelease(ctx, id, "l2", groups, 0)
	if err != nil {
		t.Fatal(err)
	}
	if free.PValuePrivate == nil || again.PValuePrivate == nil {
		t.Fatal("no noise-aware p-value")
	}
	if p, q := *free.PValuePrivate, *again.PValuePrivate; p != q {
		t.Errorf("noise-aware p-values of one release: %v, then %v; want the same (bootstrapSeed)", p, q)
	}
	paid, err := a.Hosmer(ctx, "grid", "l2", groups, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.checkSpent(2 * hugeEpsilon)
	if free.Charged || !paid.Charged || free.Plan != "grid" || free.Releases[0] != r.Stored.Release || free.N != n || len(free.Groups) != len(paid.Groups) || *free.Statistic != *paid.Statistic {
		t.Fatalf("from the ROC release %+v; new grid release %+v", free, paid)
	}
	if _, err := a.HosmerRelease(ctx, payload.ReleaseID{1}, "l2", groups, 0); !errors.Is(err, server.ErrUnknownRelease) {
		t.Errorf("unknown release: %v", err)
	}
}

// countRange is the range of the released total of the counts of plan
// at the manifest's ε = 1: n ± 5 standard deviations of prefix N of the
// Count release (both servers' noise), or [0, n] when the counts come
// from the two smoothed classes scaled to n.
func countRange(t *testing.T, plan string, n int) (lo, hi float64) {
	t.Helper()
	params := mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1, Relation: mechanism.ReplaceOne}
	unit, _ := ecdf.NewLinearGrid(0, 1, bins)
	p, err := analyst.HosmerPlan(plan, params, 10, unit)
	if err != nil {
		t.Fatal(err)
	}
	if p.CountFromLabels {
		return 0, float64(n) * (1 + 1e-12)
	}
	m, err := payload.ComponentMechanism(p.Releases[0].Mechanism, payload.Count)
	if err != nil {
		t.Fatal(err)
	}
	tol := 5 * math.Sqrt(servers*m.PrefixVariance(bins))
	return float64(n) - tol, float64(n) + tol
}
