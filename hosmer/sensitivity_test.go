package hosmer

import (
	"context"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// suffixShift returns a least-ℓ1 integer node shift χ of the add/remove
// tree t of height L (N = 2^L) with Z·χ = 1[i ≥ a] on every prefix i: dynamic
// programming from the root over the one path of nodes straddling a,
// every other node taking the constant its interval needs.
func suffixShift(t mechanism.Mechanism, levels, a int) map[int]float64 {
	chi := map[int]float64{}
	var walk func(l, j, s int, apply bool) int
	walk = func(l, j, s int, apply bool) int {
		lo, hi := (j-1)<<l+1, j<<l
		node := t.Terms(lo, nil)[l].Node
		if lo >= a || hi < a { // uniform target 1 or 0
			target := 0
			if lo >= a {
				target = 1
			}
			if c := target - s; c != 0 && apply {
				chi[node] = float64(c)
			}
			return abs(target - s)
		}
		best, bestC := math.MaxInt, 0
		for _, c := range []int{-s, 1 - s} {
			if cost := abs(c) + walk(l-1, 2*j-1, s+c, false) + walk(l-1, 2*j, s+c, false); cost < best {
				best, bestC = cost, c
			}
		}
		if apply {
			if bestC != 0 {
				chi[node] = float64(bestC)
			}
			walk(l-1, 2*j-1, s+bestC, true)
			walk(l-1, 2*j, s+bestC, true)
		}
		return best
	}
	walk(levels, 1, 0, true)
	return chi
}

func abs(x int) int { return max(x, -x) }

// apply returns (Z·χ)(i) = Σ_{terms of prefix i} coef·χ_node.
func apply(t mechanism.Mechanism, chi map[int]float64, i int) float64 {
	var v float64
	for _, term := range t.Terms(i, nil) {
		v += term.Coef * chi[term.Node]
	}
	return v
}

func l1(chi map[int]float64) float64 {
	var s float64
	for _, v := range chi {
		s += math.Abs(v)
	}
	return s
}

// The executable form of the package documentation's proof. For every
// replacement (bin a, label y, probability p) → (b, y', p') on a grid of
// 2^L bins and p, p' ∈ {0, ¼, ½, ¾, 1}, each component c with weight w_c
// ∈ {y, 1−y, p} sees the prefix change w'_c·1[i ≥ b] − w_c·1[i ≥ a]; the
// node shift χ_c = w'_c·χ(b) − w_c·χ(a), χ(·) the suffix shifts, explains
// it exactly, and Σ_c ‖χ_c‖₁ stays within units·Δ, Δ = ⌈(L+1)/2⌉ the
// add/remove sensitivity of the tree: units = 2 for {Label, NotLabel}
// (the ROC pair), 4 for {Label, Probability} (paper plan, stage 2) and 4
// for {Label, NotLabel, Probability} (joint plan).
func TestJointSensitivityByEnumeration(t *testing.T) {
	sets := []struct {
		name  string
		comps []int // indices into the weights (y, 1−y, p)
		units float64
	}{
		{"roc {Label, NotLabel}", []int{0, 1}, 2},
		{"paper {Label, Probability}", []int{0, 2}, 4},
		{"joint {Label, NotLabel, Probability}", []int{0, 1, 2}, 4},
	}
	probs := []float64{0, 0.25, 0.5, 0.75, 1}
	for _, levels := range []int{1, 2, 3, 4} {
		n := 1 << levels
		m, err := mechanism.New(mechanism.Params{Name: "tree", Bins: n, Epsilon: 1, Relation: mechanism.AddRemove})
		if err != nil {
			t.Fatal(err)
		}
		delta := float64((levels + 2) / 2) // Δ = ⌈(L+1)/2⌉
		suffix := make([]map[int]float64, n+1)
		for a := 1; a <= n; a++ {
			suffix[a] = suffixShift(m, levels, a)
			for i := 1; i <= n; i++ {
				want := 0.0
				if i >= a {
					want = 1
				}
				if got := apply(m, suffix[a], i); got != want {
					t.Fatalf("L=%d: suffix shift of bin %d gives %v at prefix %d, want %v", levels, a, got, i, want)
				}
			}
			if l1(suffix[a]) > delta {
				t.Fatalf("L=%d: suffix of bin %d needs ‖χ‖₁ = %v > Δ = %v", levels, a, l1(suffix[a]), delta)
			}
		}
		worst := make([]float64, len(sets))
		for a := 1; a <= n; a++ {
			for b := 1; b <= n; b++ {
				for y := range 2 {
					for y2 := range 2 {
						for _, p := range probs {
							for _, p2 := range probs {
								w := [3]float64{float64(y), float64(1 - y), p}
								w2 := [3]float64{float64(y2), float64(1 - y2), p2}
								for s, set := range sets {
									var norm float64
									for _, c := range set.comps {
										chi := map[int]float64{}
										for k, v := range suffix[b] {
											chi[k] += w2[c] * v
										}
										for k, v := range suffix[a] {
											chi[k] -= w[c] * v
										}
										for i := 1; i <= n; i++ {
											want := -w[c] * step(i, a)
											want += w2[c] * step(i, b)
											if got := apply(m, chi, i); math.Abs(got-want) > 1e-12 {
												t.Fatalf("L=%d %s: χ misses the change at prefix %d", levels, set.name, i)
											}
										}
										norm += l1(chi)
									}
									if norm > set.units*delta+1e-12 {
										t.Fatalf("L=%d %s: (%d,%d,%v)→(%d,%d,%v) needs Σ‖χ_c‖₁ = %v > %v·Δ", levels, set.name, a, y, p, b, y2, p2, norm, set.units)
									}
									worst[s] = max(worst[s], norm)
								}
							}
						}
					}
				}
			}
		}
		for s, set := range sets {
			t.Logf("L=%d Δ=%v %s: worst Σ‖χ_c‖₁ = %v (bound %v·Δ)", levels, delta, set.name, worst[s], set.units)
		}
	}
}

func step(i, a int) float64 {
	if i >= a {
		return 1
	}
	return 0
}

// The privacy loss of the joint release is Σ_c ‖χ_c‖₁ / b_c, so the
// bound holds only if aggregation gives every component the same node
// scale b = Δ/(ε_c/2) in the component's units. Check that on a real
// release of the joint plan.
func TestJointPlanNodeScales(t *testing.T) {
	const nBins, eps = 1024, 1.0
	plan, err := JointPlan(eps, nBins, mechanism.Params{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := curator.New("hl", nBins, nil, ledger.Budget{Epsilon: plan.Epsilon}, ledger.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := u.NewRelease(context.Background(), plan.Releases[0])
	if err != nil {
		t.Fatal(err)
	}
	want := float64((10+2)/2) / (eps / 4) // Δ = ⌈(L+1)/2⌉ = 6 at L = 10, ε_c/2 = ε/4
	for _, c := range plan.Releases[0].Components {
		tree := rel.Mechanism(c)
		if tree.Name() != "tree" {
			t.Fatalf("component %v: mechanism %s, want tree", c, tree.Name())
		}
		if tree.Relation() != mechanism.AddRemove {
			t.Errorf("component %v: relation %v, want add/remove", c, tree.Relation())
		}
		node, err := noise.NewDiscreteLaplace(want * c.Scale())
		if err != nil {
			t.Fatal(err)
		}
		if got := tree.NodeVariance(); math.Abs(got-node.Variance()) > 1e-9*got {
			t.Errorf("component %v: node variance %v, want that of scale %v in its units, %v", c, got, want, node.Variance())
		}
	}
}
