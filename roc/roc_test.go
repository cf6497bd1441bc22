package roc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/party"
)

// isotonic is the test's smoother: ecdf/smooth's pointwise p = 2
// smoothing (PAVA clipped to [0, 1]).
func isotonic(f []float64) ([]float64, error) { return smooth.PointwiseL2(f), nil }

// mannWhitney is the AUC by brute force over all (positive, negative)
// pairs: P(s⁺ > s⁻) + ½ P(s⁺ = s⁻).
func mannWhitney(scores []float64, labels []int) float64 {
	var wins float64
	var pairs int
	for i, si := range scores {
		for j, sj := range scores {
			if labels[i] != 1 || labels[j] != 0 {
				continue
			}
			pairs++
			switch {
			case si > sj:
				wins++
			case si == sj:
				wins += 0.5
			}
		}
	}
	return wins / float64(pairs)
}

// onGrid draws n instances with scores on the thresholds of g (many
// ties) and labels more often 1 at higher scores.
func onGrid(g *ecdf.Grid, n int, seed uint64) (scores []float64, bins, labels []int) {
	r := rand.New(rand.NewPCG(seed, 1))
	for range n {
		i := 1 + r.IntN(g.Len())
		y := 0
		if r.Float64() < float64(i)/float64(g.Len()+1) {
			y = 1
		}
		scores = append(scores, g.Threshold(i))
		bins = append(bins, i)
		labels = append(labels, y)
	}
	return scores, bins, labels
}

func TestAUCIsMannWhitneyOnGrid(t *testing.T) {
	g, err := ecdf.NewLinearGrid(0, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(5) {
		scores, bins, labels := onGrid(g, 300, seed)
		pos, neg, err := ExactPrefixes(bins, labels, g.Len())
		if err != nil {
			t.Fatal(err)
		}
		want := mannWhitney(scores, labels)
		for name, s := range map[string]Smoother{"none": nil, "isotonic": isotonic} {
			c, err := FromPrefixes(pos, neg, s)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.AUC(); math.Abs(got-want) > 1e-12 {
				t.Errorf("seed %d, smoothing %s: AUC %v, Mann–Whitney %v", seed, name, got, want)
			}
			if !c.Monotone() {
				t.Errorf("seed %d: exact curve not monotone", seed)
			}
		}
	}
}

// noisy adds one release of m's noise (fixed seed) to exact prefixes.
func noisy(t *testing.T, m mechanism.Mechanism, prefix []float64, seed byte) []float64 {
	t.Helper()
	rel := m.NewRelease([32]byte{seed})
	out := make([]float64, len(prefix))
	for i := range prefix {
		out[i] = prefix[i] + float64(rel.PrefixNoise(i+1))
	}
	return out
}

func TestSmoothedNoisyCurveIsMonotone(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 64)
	_, bins, labels := onGrid(g, 2000, 7)
	pos, neg, _ := ExactPrefixes(bins, labels, g.Len())
	m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: g.Len(), Epsilon: 0.5, Relation: mechanism.AddRemove})
	if err != nil {
		t.Fatal(err)
	}
	truth, _ := FromPrefixes(pos, neg, nil)
	for seed := range byte(10) {
		c, err := FromPrefixes(noisy(t, m, pos, 2*seed), noisy(t, m, neg, 2*seed+1), isotonic)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Monotone() {
			t.Fatalf("seed %d: smoothed curve not monotone: %v %v", seed, c.FPR, c.TPR)
		}
		if a := c.AUC(); a < 0 || a > 1 {
			t.Errorf("seed %d: AUC %v outside [0, 1]", seed, a)
		}
		if _, err := AreaError(truth, c); err != nil {
			t.Error(err)
		}
		pr := c.PR(0)
		for k := range pr.Recall {
			if pr.Precision[k] < 0 || pr.Precision[k] > 1 || pr.Recall[k] < 0 || pr.Recall[k] > 1 {
				t.Fatalf("seed %d: PR point %d (%v, %v) outside [0, 1]²", seed, k, pr.Recall[k], pr.Precision[k])
			}
			if k > 0 && pr.Recall[k] > pr.Recall[k-1] {
				t.Fatalf("seed %d: recall increases at point %d", seed, k)
			}
			if tp, fp := c.Positives*c.TPR[pr.Threshold[k]], c.Negatives*c.FPR[pr.Threshold[k]]; tp+fp < 1 {
				t.Fatalf("seed %d: PR keeps threshold %d with %v predicted positives", seed, pr.Threshold[k], tp+fp)
			}
		}
	}
}

// curve builds a Curve from points listed from (0, 0) to (1, 1).
func curve(pts ...[2]float64) *Curve {
	c := &Curve{Positives: 1, Negatives: 1}
	for k := len(pts) - 1; k >= 0; k-- {
		c.FPR = append(c.FPR, pts[k][0])
		c.TPR = append(c.TPR, pts[k][1])
	}
	return c
}

func TestAreaErrorKnownCurves(t *testing.T) {
	diagonal := curve([2]float64{0, 0}, [2]float64{1, 1})
	perfect := curve([2]float64{0, 0}, [2]float64{0, 1}, [2]float64{1, 1})
	step := curve([2]float64{0, 0}, [2]float64{0.5, 0}, [2]float64{0.5, 1}, [2]float64{1, 1})
	flat := curve([2]float64{0, 0}, [2]float64{0, 0.5}, [2]float64{1, 0.5}, [2]float64{1, 1})
	bent := curve([2]float64{0, 0}, [2]float64{0.2, 0.6}, [2]float64{0.6, 0.9}, [2]float64{1, 1})
	for _, tc := range []struct {
		name string
		a, b *Curve
		want float64
	}{
		{"identical", bent, bent, 0},
		{"perfect vs diagonal", perfect, diagonal, 0.5},
		{"diagonal vs step at 1/2", diagonal, step, 0.25},
		{"diagonal vs flat 1/2 (crossing mid-piece)", diagonal, flat, 0.25},
		{"flat vs diagonal", flat, diagonal, 0.25},
		// bent − diagonal ≥ 0 everywhere: the area is AUC difference,
		// 0.2·0.6/2 + 0.4·1.5/2 + 0.4·1.9/2 − 1/2 = 0.24.
		{"bent vs diagonal", bent, diagonal, 0.24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AreaError(tc.a, tc.b)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("%s: area error %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	if e := AUCError(bent, diagonal); math.Abs(e-0.24) > 1e-12 {
		t.Errorf("AUC error %v, want 0.24", e)
	}
}

// The exact piecewise integration agrees with a fine midpoint rule on
// random monotone curves (the midpoint rule's error on |f−g| is at most
// h·(number of kinks and crossings)·max slope·h, well under 1e-4 here).
func TestAreaErrorMatchesFineGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := func() *Curve {
		f := make([]float64, 12)
		for i := range f {
			f[i] = r.Float64()
		}
		g := make([]float64, 12)
		for i := range g {
			g[i] = r.Float64()
		}
		fs, _ := isotonic(sortedCopy(f))
		gs, _ := isotonic(sortedCopy(g))
		c, err := FromPrefixes(fs, gs, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for trial := range 20 {
		a, b := random(), random()
		got, err := AreaError(a, b)
		if err != nil {
			t.Fatal(err)
		}
		pa, _ := newPiecewise("a", a)
		pb, _ := newPiecewise("b", b)
		const steps = 200000
		var want float64
		for k := range steps {
			x := (float64(k) + 0.5) / steps
			want += math.Abs(pa.right(x)-pb.right(x)) / steps
		}
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("trial %d: exact %v, midpoint rule %v", trial, got, want)
		}
	}
}

func sortedCopy(f []float64) []float64 {
	s := append([]float64(nil), f...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestErrors(t *testing.T) {
	if _, err := FromPrefixes([]float64{1, 2}, []float64{1}, nil); err == nil {
		t.Error("unequal lengths accepted")
	}
	if _, err := FromPrefixes([]float64{0, -1}, []float64{1, 2}, nil); err == nil {
		t.Error("non-positive released total of positives accepted")
	}
	if _, err := FromPrefixes([]float64{1, math.NaN(), 2}, []float64{1, 2, 3}, nil); err == nil {
		t.Error("NaN prefix accepted")
	}
	bad := func(f []float64) ([]float64, error) { return []float64{0.5, 0.2, 1}, nil }
	if _, err := FromPrefixes([]float64{1, 2, 3}, []float64{1, 2, 3}, bad); err == nil {
		t.Error("decreasing smoother output accepted")
	}
	raw, err := FromPrefixes([]float64{2, 1, 3}, []float64{1, 2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AreaError(raw, raw); err == nil {
		t.Error("area error of a non-monotone curve accepted")
	}
	if _, _, err := ExactPrefixes([]int{1, 5}, []int{0, 1}, 4); err == nil {
		t.Error("bin outside the grid accepted")
	}
	if _, _, err := ExactPrefixes([]int{1, 2}, []int{0, 2}, 4); err == nil {
		t.Error("label 2 accepted")
	}
	if _, err := (UStatSource{}).Prefixes(core.Label, AllBins(4)); err == nil {
		t.Error("source without releases accepted")
	}
}

// Through the trusted-curator UStat (UStatSource) at ε = 2^48 (noise
// zero with overwhelming probability) the private curve is the exact one.
func TestCurveThroughUStat(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 16)
	scores, _, labels := onGrid(g, 200, 11)
	var parties []*party.Party
	for j, s := range scores {
		p, err := party.New(party.Instance{Score: s, Label: labels[j]}, g)
		if err != nil {
			t.Fatal(err)
		}
		parties = append(parties, p)
	}
	u, err := curator.New("roc", g.Len(), parties, ledger.Budget{Epsilon: 1 << 50}, ledger.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rel, err := u.NewRelease(ctx, aggregation.ReleaseSpec{
		Mechanism:  mechanism.Params{Name: "tree", Bins: g.Len(), Epsilon: 1 << 48},
		Components: []core.Component{core.Label, core.NotLabel},
	})
	if err != nil {
		t.Fatal(err)
	}
	src := UStatSource{Ctx: ctx, UStat: u, Releases: []*aggregation.Release{rel}}
	pos, err := src.Prefixes(core.Label, AllBins(g.Len()))
	if err != nil {
		t.Fatal(err)
	}
	neg, err := src.Prefixes(core.NotLabel, AllBins(g.Len()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromPrefixes(pos, neg, isotonic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AUC(), mannWhitney(scores, labels); math.Abs(got-want) > 1e-12 {
		t.Errorf("AUC through UStat %v, Mann–Whitney %v", got, want)
	}
}

// TestPathAreaError: along a monotone curve PathAreaError is AreaError;
// a curve that turns back is measured along its polyline, each segment's
// |dFPR| counted once, and a curve leaving [0, 1] against the extended
// true curve.
func TestPathAreaError(t *testing.T) {
	truth := &Curve{FPR: []float64{1, 0.5, 0}, TPR: []float64{1, 0.5, 0}} // the diagonal
	mono := &Curve{FPR: []float64{1, 0.5, 0.5, 0}, TPR: []float64{1, 0.75, 0.25, 0}}
	want, err := AreaError(truth, mono)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := PathAreaError(truth, mono); err != nil || math.Abs(got-want) > 1e-12 {
		t.Errorf("monotone curve: PathAreaError %v (%v), AreaError %v", got, err, want)
	}
	for _, c := range []struct {
		name     string
		fpr, tpr []float64
		want     float64
	}{
		// Segments (1,1)→(0.25,0.5), (0.25,0.5)→(0.5,1), (0.5,1)→(0,0):
		// triangles of areas 0.75·0.25/2, 0.25·(0.25+0.5)/2, 0.5·0.5/2.
		{"turns back", []float64{1, 0.25, 0.5, 0}, []float64{1, 0.5, 1, 0}, 0.09375 + 0.09375 + 0.125},
		// (1,1)→(−0.5,0): 1/12 left of FPR 0 (truth 0), 1/6 right of it;
		// (−0.5,0)→(0,0) lies on the extended truth.
		{"leaves the square", []float64{1, -0.5, 0}, []float64{1, 0, 0}, 1.0/12 + 1.0/6},
	} {
		got, err := PathAreaError(truth, &Curve{FPR: c.fpr, TPR: c.tpr})
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

// TPRAt reads the polyline: interpolation between points, the top of a
// vertical step, the upper envelope where the curve crosses itself, and
// NaN outside its FPR range.
func TestTPRAt(t *testing.T) {
	// Threshold order: (1, 1), (0.5, 0.8), (0.5, 0.6), (0, 0).
	step := &Curve{FPR: []float64{1, 0.5, 0.5, 0}, TPR: []float64{1, 0.8, 0.6, 0}}
	// (1, 1), (0.2, 0.5), (0.6, 0.7), (0, 0): the middle segment doubles back.
	cross := &Curve{FPR: []float64{1, 0.2, 0.6, 0}, TPR: []float64{1, 0.5, 0.7, 0}}
	partial := &Curve{FPR: []float64{0.8, 0.2}, TPR: []float64{0.9, 0.3}}
	for _, c := range []struct {
		name  string
		curve *Curve
		x     float64
		want  float64
	}{
		{"interpolated", step, 0.75, 0.9},
		{"top of a vertical step", step, 0.5, 0.8},
		{"below the step", step, 0.25, 0.3},
		{"end", step, 0, 0},
		{"upper envelope of a crossing", cross, 0.4, 0.625}, // segments give 0.625, 0.6 and 0.467
		{"outside the range", partial, 0.9, math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.curve.TPRAt(c.x)
			if math.IsNaN(c.want) != math.IsNaN(got) || !math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12 {
				t.Errorf("TPRAt(%v) = %v, want %v", c.x, got, c.want)
			}
		})
	}
}
