package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// componentPair returns the mechanisms of Label and Probability for p.
func componentPair(t *testing.T, p mechanism.Params) (label, prob mechanism.Mechanism) {
	t.Helper()
	label, err := ComponentMechanism(p, Label)
	if err != nil {
		t.Fatal(err)
	}
	prob, err = ComponentMechanism(p, Probability)
	if err != nil {
		t.Fatal(err)
	}
	return label, prob
}

// discreteCorrection bounds Var(Probability)/(2^64·Var(Label)) − 1 for
// a (mean) prefix variance v of the mechanism m of Label, whose noise is
// the same but for every Laplace scale b and Gaussian σ being 2^32 times
// larger:
//
//   - discrete Laplace nodes (tree, kary): Var = 1/(2 sinh²(1/(2b))) =
//     2b²(1 − 1/(12b²) + O(b⁻⁴)), so the ratio is 2^64·(1 + 1/(12b²) +
//     O(b⁻⁴)) (at scale 2^32·b the correction vanishes); b is recovered
//     from NodeVariance;
//   - discrete Gaussian nodes (gaussian-tree): Var = σ² up to a relative
//     e^{−2π²σ²} (CKS20), below 10^{−8} for σ² ≥ 1;
//   - cascade: prefix variance v = V + r, V the Gaussian part (scaling by
//     2^64) and r ≤ 1/8 the rounding (not scaling), so the ratio is
//     2^64·(V + r/2^64)/(V + r), within r/V ≤ 1/(8(v − 1/8)) below 2^64.
func discreteCorrection(t *testing.T, m mechanism.Mechanism, v float64) (lo, hi float64) {
	switch name := m.Name(); {
	case name == "tree" || strings.HasPrefix(name, "kary"):
		b := 1 / (2 * math.Asinh(1/math.Sqrt(2*m.NodeVariance())))
		c := 1 / (12 * b * b)
		return c - 1/(b*b*b*b), c + 1/(b*b*b*b)
	case name == "gaussian-tree":
		return -1e-8, 1e-8
	case name == "cascade":
		return -1 / (8 * (v - 1.0/8)), 0
	default:
		t.Fatalf("no correction known for %s", name)
		return 0, 0
	}
}

// TestProbabilityNoiseIsUnitTimesLabelNoise is the fix of issue 12's
// under-noised Probability component: one record moves the fixed-point
// Σp by up to 2^32 units, so its noise must be 2^32 times Label's — the
// variance 2^64 times — under every mechanism and relation. The old
// calibration, ε/2^32, got this only for pure Laplace noise: the
// Gaussian and ℓ2-Laplace scales do not grow like 1/ε, and their
// Probability noise was 10^4–10^7 times too small.
func TestProbabilityNoiseIsUnitTimesLabelNoise(t *testing.T) {
	const scale2 = float64(ProbabilityScale) * ProbabilityScale
	sawL2 := false
	for _, r := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
		for _, p := range []mechanism.Params{
			{Name: "tree", Epsilon: 1},
			{Name: "tree", Epsilon: 0.1},
			{Name: "kary", Epsilon: 1},
			{Name: "kary", K: 7, Epsilon: 0.3},
			{Name: "kary", K: 2, Epsilon: 0.5, Delta: 0.05}, // Lemma 21's ℓ2 scale
			{Name: "cascade", Epsilon: 1, Delta: 1e-6},
			{Name: "cascade", Epsilon: 0.2, Delta: 1e-3},
			{Name: "gaussian-tree", Epsilon: 1, Delta: 1e-6},
			{Name: "gaussian-tree", Epsilon: 3, Delta: 1e-9},
			{Name: "auto", Epsilon: 1},
			{Name: "auto", Epsilon: 1, Delta: 1e-6},
		} {
			p.Bins, p.Relation = 300, r
			t.Run(fmt.Sprintf("%v/%+v", r, p), func(t *testing.T) {
				label, prob := componentPair(t, p)
				sawL2 = sawL2 || strings.HasSuffix(label.Name(), ",l2)")
				if prob.Name() != label.Name() || prob.Epsilon() != label.Epsilon() || prob.Delta() != label.Delta() || prob.Relation() != mechanism.AddRemove {
					t.Errorf("%+v: Probability runs %s ε=%v δ=%v %v, Label %s ε=%v δ=%v", p, prob.Name(), prob.Epsilon(), prob.Delta(),
						prob.Relation(), label.Name(), label.Epsilon(), label.Delta())
				}
				for _, c := range []struct {
					what        string
					prob, label float64
				}{
					{"mean prefix variance", prob.MeanVariance(), label.MeanVariance()},
					{"prefix 1 variance", prob.PrefixVariance(1), label.PrefixVariance(1)},
					{"prefix 300 variance", prob.PrefixVariance(300), label.PrefixVariance(300)},
				} {
					lo, hi := discreteCorrection(t, label, c.label)
					if dev := c.prob/(scale2*c.label) - 1; dev < lo || dev > hi {
						t.Errorf("%s %v (%+v): %s ratio Probability/Label = 2^64·(1 %+.3g), want 2^64 within [%+.3g, %+.3g]",
							label.Name(), r, p, c.what, dev, lo, hi)
					}
				}
			})
		}
	}
	if !sawL2 {
		t.Error("no case ran k-ary's ℓ2 scale (Lemma 21)")
	}
}

// TestProbabilityNoiseMonteCarlo plays the analyst of issue 12: it
// draws the released Σp noise of many gaussian-tree releases at spec
// ε = 1, δ = 10^−6 (replace-one) and checks that its empirical variance,
// in units of a record's contribution (2^64 fixed-point units²), matches
// the Label noise's exact variance, as it must for one record's p to be
// as hidden as its y. The noise is Gaussian, so the sample variance of
// R draws has standard error V·√(2/R): 4.5 % at R = 1000, and 5 standard
// errors cannot mistake a factor of 2 for 1 (before the fix the Σp noise
// had an s.d. about 5·10^4 times too small). The same draws' Label noise
// is checked against the same V.
func TestProbabilityNoiseMonteCarlo(t *testing.T) {
	const releases, prefix = 1000, 64
	p := mechanism.Params{Name: "gaussian-tree", Bins: 64, Epsilon: 1, Delta: 1e-6}
	label, prob := componentPair(t, p)
	want := label.PrefixVariance(prefix)
	var sumProb, sumLabel float64
	for r := range releases {
		var seed [32]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(r)+0x9e37)
		x := float64(prob.NewRelease(ComponentSeed(seed, Probability)).PrefixNoise(prefix)) / ProbabilityScale
		y := float64(label.NewRelease(ComponentSeed(seed, Label)).PrefixNoise(prefix))
		sumProb, sumLabel = sumProb+x*x, sumLabel+y*y
	}
	se := want * math.Sqrt(2.0/releases)
	for _, c := range []struct {
		what string
		sum  float64
	}{{"Σp noise / 2^32", sumProb}, {"Σy noise", sumLabel}} {
		got := c.sum / releases
		t.Logf("%s: variance %.2f, Label's exact %.2f (s.e. %.2f); a record moves it by 1", c.what, got, want, se)
		if math.Abs(got-want) > 5*se {
			t.Errorf("%s at spec ε=1, δ=1e-6: empirical variance %.4g (s.d. %.3g), want %.4g (s.d. %.3g) within 5 s.e. %.3g",
				c.what, got, math.Sqrt(got), want, math.Sqrt(want), 5*se)
		}
	}
	if 2*want-want < 10*se {
		t.Errorf("the test cannot tell variance %v from %v (s.e. %v)", want, 2*want, se)
	}
}

// TestComponentMechanismRefusesNoiseOutsideTheShareDomain checks that a
// Probability component whose noise would wrap the 64-bit share domain
// is refused with mechanism.ErrNoiseTooLarge, while its Label component
// at the same parameters is fine.
func TestComponentMechanismRefusesNoiseOutsideTheShareDomain(t *testing.T) {
	p := mechanism.Params{Name: "tree", Bins: 1 << 16, Epsilon: 1e-4}
	if _, err := ComponentMechanism(p, Label); err != nil {
		t.Fatalf("Label at ε = 1e-4: %v", err)
	}
	_, err := ComponentMechanism(p, Probability)
	if !errors.Is(err, mechanism.ErrNoiseTooLarge) || !strings.Contains(err.Error(), "probability") {
		t.Errorf("Probability at ε = 1e-4: error %v, want one naming the component and wrapping ErrNoiseTooLarge", err)
	}
}

// TestComponentMechanismRelations checks the relation and budget of each
// component: Count as requested, the others add/remove at ε/2 under
// replace-one, and that the components' seeds differ.
func TestComponentMechanismRelations(t *testing.T) {
	p := mechanism.Params{Name: "tree", Bins: 256, Epsilon: 1}
	count, err := ComponentMechanism(p, Count)
	if err != nil {
		t.Fatal(err)
	}
	label, _ := componentPair(t, p)
	if count.Epsilon() != 1 || count.Relation() != mechanism.ReplaceOne || label.Epsilon() != 0.5 || label.Relation() != mechanism.AddRemove {
		t.Errorf("count ε %v %v, label ε %v %v", count.Epsilon(), count.Relation(), label.Epsilon(), label.Relation())
	}
	if ComponentSeed([32]byte{1}, Count) == ComponentSeed([32]byte{1}, Label) {
		t.Error("components share a seed")
	}
}
