package mechanism

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// Compile-time checks that *kary and *Cascade are Mechanisms.
var (
	_ Mechanism = (*kary)(nil)
	_ Mechanism = (*cascade)(nil)
)

func mustKAry(t testing.TB, p Params) *kary {
	t.Helper()
	m, err := newKAry(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// plainKAry is Algorithm 1 (digits 0…k−1) with Laplace nodes of scale h/ε.
func plainKAry(t testing.TB, bins, k int) *kary {
	m := newKAryShape(Params{Bins: bins, Epsilon: 1, Relation: AddRemove}, k, 0, k-1)
	m.name = "plain"
	return m
}

// karySeed returns a distinct fixed seed per simulation run.
func karySeed(r int) [32]byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[8:], uint64(r)+0x6b61)
	return s
}

func TestKAryDigitsAndWalks(t *testing.T) {
	for _, c := range []struct {
		k, t, h int
		digits  []int // most significant first
		walk    []int // keys, nil: not checked
	}{
		{3, 8, 3, []int{1, 0, -1}, []int{9, 8}},
		{3, 5, 3, []int{1, -1, -1}, []int{9, 6, 5}},
		{19, 1000, 3, []int{3, -4, -7}, nil},
		{4, 40, 3, []int{2, 2, 0}, nil},
	} {
		t.Run(fmt.Sprintf("k=%d/t=%d", c.k, c.t), func(t *testing.T) {
			m := mustKAry(t, Params{Bins: c.t, Epsilon: 1, K: c.k})
			if m.Height() != c.h {
				t.Errorf("k=%d N=%d: h = %d, want %d", c.k, c.t, m.Height(), c.h)
			}
			d := m.Digits(c.t)
			slices.Reverse(d)
			if !slices.Equal(d, c.digits) {
				t.Errorf("k=%d t=%d: digits %v, want %v", c.k, c.t, d, c.digits)
			}
			var keys []int
			m.walk(c.t, func(key, _ int) { keys = append(keys, key) })
			if c.walk != nil && !slices.Equal(keys, c.walk) {
				t.Errorf("k=%d t=%d: walk %v, want %v", c.k, c.t, keys, c.walk)
			}
			var norm int
			for _, x := range d {
				norm += max(x, -x)
			}
			if len(keys) != norm {
				t.Errorf("k=%d t=%d: walk uses %d nodes, want ‖t‖₁ = %d", c.k, c.t, len(keys), norm)
			}
		})
	}
}

// usedNodes walks every prefix t ≤ N and returns, per key, the node's
// interval and sign; it fails if a key is met with two intervals or signs
// or if a walk does not sum to its prefix.
func usedNodes(t *testing.T, m *kary) map[int][3]int {
	t.Helper()
	nodes := map[int][3]int{}
	for pt := 1; pt <= m.bins; pt++ {
		cover := make([]int, m.pow[m.h]+2)
		p := 0
		m.walk(pt, func(key, sign int) {
			size := m.pow[0]
			for ; (key-sign*0)%size == 0 && size <= m.pow[m.h] && key%(size*m.k) == 0; size *= m.k {
			}
			lo, hi := p+1, p+size // added: [p+1, p+size]
			if sign < 0 {
				lo, hi = p-size+1, p
			}
			if want := lo - 1; sign > 0 && key != hi || sign < 0 && key != want {
				t.Fatalf("%s N=%d t=%d: key %d for node [%d,%d] sign %d", m.name, m.bins, pt, key, lo, hi, sign)
			}
			node := [3]int{lo, hi, sign}
			if old, ok := nodes[key]; ok && old != node {
				t.Fatalf("%s N=%d: key %d is both %v and %v", m.name, m.bins, key, old, node)
			}
			nodes[key] = node
			for x := lo; x <= hi; x++ {
				cover[x] += sign
			}
			p += sign * size
			if key < 1 || key > m.maxKey {
				t.Fatalf("%s N=%d t=%d: key %d outside [1, %d]", m.name, m.bins, pt, key, m.maxKey)
			}
		})
		for x := 1; x < len(cover); x++ {
			if want := b2int(x <= pt); cover[x] != want {
				t.Fatalf("%s N=%d: walk of t=%d covers bin %d %d times", m.name, m.bins, pt, x, cover[x])
			}
		}
	}
	return nodes
}

// TestKAryWalksAndSensitivity enumerates, for small k and N, the nodes
// every walk uses, every replace-one move a → b and every added
// instance: the ℓ1 norm of the used-node shift χ has maximum exactly
// Sensitivity() (h under add/remove), and Σ_walk ±χ reproduces the
// change of every prefix.
func TestKAryWalksAndSensitivity(t *testing.T) {
	var shapes []*kary
	for k := 2; k <= 7; k++ {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 9, 12, 13, 17, 24, 25, 40, 62} {
			p := Params{Bins: n, Epsilon: 1, K: k}
			shapes = append(shapes, mustKAry(t, p), plainKAry(t, n, k))
		}
	}
	seen2h, seen2hm1 := false, false
	for _, m := range shapes {
		nodes := usedNodes(t, m)
		for key := 1; key <= m.maxKey; key++ {
			n, ok := nodes[key]
			l := 1
			for key%m.pow[l] == 0 {
				l++
			}
			j := (n[0] - 1) / m.pow[max(l-1, 0)]
			if ok && !m.used(l, j) {
				t.Fatalf("%s N=%d: key %d (level %d, node %d) is used but used() says no", m.name, m.bins, key, l, j)
			}
		}
		var walked []int
		for key := range nodes {
			walked = append(walked, key)
		}
		slices.Sort(walked)
		if keys := m.usedKeys(); !slices.Equal(keys, walked) {
			t.Fatalf("%s N=%d: usedKeys %v, the walks use %v", m.name, m.bins, keys, walked)
		}
		countUsed := 0
		for l := 1; l <= m.h; l++ {
			for j := 0; j*m.pow[l-1] <= m.maxKey; j++ { // padding nodes beyond N too
				countUsed += b2int(m.used(l, j))
			}
		}
		if countUsed != len(nodes) {
			t.Fatalf("%s N=%d: used() counts %d nodes, the walks use %d", m.name, m.bins, countUsed, len(nodes))
		}
		shift := func(a, b int) (chi map[int]int, l1 int) { // move a → b (a = 0: add b)
			chi = map[int]int{}
			for key, n := range nodes {
				v := b2int(n[0] <= b && b <= n[1]) - b2int(a > 0 && n[0] <= a && a <= n[1])
				if v != 0 {
					chi[key] = v
					l1 += max(v, -v)
				}
			}
			return chi, l1
		}
		worst, worstAdd := 0, 0
		for a := 0; a <= m.bins; a++ {
			for b := 1; b <= m.bins; b++ {
				if a == b {
					continue
				}
				chi, l1 := shift(a, b)
				if a == 0 {
					worstAdd = max(worstAdd, l1)
				} else {
					worst = max(worst, l1)
				}
				for pt := 1; pt <= m.bins && m.bins <= 25; pt++ {
					got := 0
					m.walk(pt, func(key, sign int) { got += sign * chi[key] })
					want := b2int(b <= pt) - b2int(a > 0 && a <= pt)
					if got != want {
						t.Fatalf("%s N=%d move %d→%d: Σ±χ on prefix %d = %d, want %d", m.name, m.bins, a, b, pt, got, want)
					}
				}
			}
		}
		addRemove, replace := m.sensitivities()
		if replace != worst || addRemove != worstAdd || worstAdd != m.h {
			t.Errorf("%s N=%d h=%d: sensitivities (add %d, replace %d), enumeration (add %d, replace %d)",
				m.name, m.bins, m.h, addRemove, replace, worstAdd, worst)
		}
		if m.bins > 1 && m.bins == m.maxKey && m.lo < 0 {
			seen2h = seen2h || (m.k > 3 && worst == 2*m.h)
			seen2hm1 = seen2hm1 || (m.k == 3 && worst == 2*m.h-1)
		}
	}
	if !seen2h || !seen2hm1 {
		t.Errorf("expected Δ = 2h for some full tree with k > 3 (%v) and 2h − 1 for k = 3 (%v)", seen2h, seen2hm1)
	}
}

// continuousMeanMSE is the mean prefix MSE with continuous Laplace node
// noise Lap(Δ/ε): mean ‖t‖₁ · 2(Δ/ε)².
func continuousMeanMSE(m *kary) float64 {
	s := float64(m.sens) / m.epsilon
	return m.MeanNodesPerPrefix() * 2 * s * s
}

func TestKAryMeanMSEVectors(t *testing.T) {
	for _, c := range []struct {
		m    *kary
		h    int
		want float64
	}{
		{mustKAry(t, Params{Bins: 13, Epsilon: 1, K: 3, Relation: AddRemove}), 3, 37.3846},
		{mustKAry(t, Params{Bins: 62, Epsilon: 1, K: 5, Relation: AddRemove}), 3, 65.3226},
		{plainKAry(t, 1023, 2), 10, 1000.9775},
	} {
		t.Run(fmt.Sprint(c.h), func(t *testing.T) {
			if got := continuousMeanMSE(c.m); c.m.h != c.h || math.Abs(got-c.want) > 5e-5 {
				t.Errorf("%s N=%d: h=%d, mean MSE %.4f, want h=%d, %.4f", c.m.name, c.m.bins, c.m.h, got, c.h, c.want)
			}
		})
	}
	// Lemma 14: odd k, N = (k^h−1)/2, add/remove.
	for _, k := range []int{3, 5, 7, 9, 19} {
		for h := 1; h <= 4; h++ {
			n := (int(math.Pow(float64(k), float64(h))) - 1) / 2
			m := mustKAry(t, Params{Bins: n, Epsilon: 0.5, K: k, Relation: AddRemove})
			kf, hf := float64(k), float64(h)
			want := kf * (1 - 1/(kf*kf)) * hf * hf * hf / (2 * 0.25 * (1 - math.Pow(kf, -hf)))
			if got := continuousMeanMSE(m); math.Abs(got-want) > 1e-9*want {
				t.Errorf("k=%d h=%d: mean MSE %v, Lemma 14 gives %v", k, h, got, want)
			}
		}
	}
}

func TestKAryDigitNormSum(t *testing.T) {
	for k := 2; k <= 9; k++ {
		for _, n := range []int{1, 2, 10, 77, 500} {
			for _, m := range []*kary{mustKAry(t, Params{Bins: n, Epsilon: 1, K: k}), plainKAry(t, n, k)} {
				var want int64
				for pt := 1; pt <= n; pt++ {
					for _, d := range m.Digits(pt) {
						want += int64(max(d, -d))
					}
				}
				if m.normSum != want {
					t.Errorf("%s N=%d: Σ‖t‖₁ = %d, brute force %d", m.name, n, m.normSum, want)
				}
			}
		}
	}
}

func TestKAryVariance(t *testing.T) {
	m := mustKAry(t, Params{Bins: 1000, Epsilon: 0.7, K: 7})
	r := math.Exp(-0.7 / float64(m.sens))
	node := 2 * r / ((1 - r) * (1 - r))
	if math.Abs(m.NodeVariance()-node) > 1e-12*node {
		t.Errorf("node variance %v, want 2r/(1−r)² = %v", m.NodeVariance(), node)
	}
	var sum float64
	for i := 1; i <= 1000; i++ {
		if got := m.PrefixVariance(i); got != float64(len(m.Terms(i, nil)))*node && math.Abs(got-float64(len(m.Terms(i, nil)))*node) > 1e-9 {
			t.Fatalf("prefix %d: variance %v, want %d·%v", i, got, len(m.Terms(i, nil)), node)
		}
		sum += m.PrefixVariance(i)
	}
	if math.Abs(sum/1000-m.MeanVariance()) > 1e-9*sum {
		t.Errorf("MeanVariance %v, mean of PrefixVariance %v", m.MeanVariance(), sum/1000)
	}
}

// dlapMoments returns E[X²], E[X⁴] of Lap_Z(scale) by summation.
func dlapMoments(scale float64) (mu2, mu4 float64) {
	mass := 1.0
	for x := 1; x < int(60*scale)+10; x++ {
		w := math.Exp(-float64(x) / scale)
		mass += 2 * w
		mu2 += 2 * float64(x*x) * w
		mu4 += 2 * math.Pow(float64(x), 4) * w
	}
	return mu2 / mass, mu4 / mass
}

// TestKAryMonteCarlo compares the sample variance of PrefixNoise over
// independent seeds with PrefixVariance, within 5 standard errors from
// the exact fourth moment of a sum of n i.i.d. node noises; the
// tolerance is about 18%, far below a factor-2 error in the scale.
func TestKAryMonteCarlo(t *testing.T) {
	const runs = 4000
	m := mustKAry(t, Params{Bins: 40, Epsilon: 1, K: 5})
	mu2, mu4 := dlapMoments(float64(m.sens) / m.epsilon)
	prefixes := []int{1, 7, 13, 31, 40}
	sums := make([]float64, len(prefixes))
	for r := range runs {
		rel := m.NewRelease(karySeed(r))
		for j, i := range prefixes {
			x := float64(rel.PrefixNoise(i))
			sums[j] += x * x
		}
	}
	for j, i := range prefixes {
		n := float64(len(m.Terms(i, nil)))
		want := m.PrefixVariance(i)
		m4 := n*mu4 + 3*n*(n-1)*mu2*mu2
		se := math.Sqrt((m4 - want*want) / runs)
		if got := sums[j] / runs; math.Abs(got-want) > 5*se {
			t.Errorf("prefix %d: Monte-Carlo variance %.1f, exact %.1f (s.e. %.1f)", i, got, want, se)
		}
	}
}

// TestKAryReleaseSumsItsTerms checks that every prefix noise is the
// signed sum of the node noises Terms names, each node's value being
// the first draw of its own stream.
func TestKAryReleaseSumsItsTerms(t *testing.T) {
	m := mustKAry(t, Params{Bins: 300, Epsilon: 1, K: 6})
	seed := karySeed(1)
	rel := m.NewRelease(seed).(*karyRelease)
	if len(rel.vals) > m.Nodes() {
		t.Errorf("release drew %d nodes, more than Nodes() = %d", len(rel.vals), m.Nodes())
	}
	for i := 1; i <= 300; i++ {
		got := rel.PrefixNoise(i)
		var want int64
		for _, term := range m.Terms(i, nil) {
			want += int64(term.Coef) * m.node.Sample(nodeStream(seed, karyNoiseDomain, term.Node))
		}
		if got != want || got != rel.PrefixNoise(i) {
			t.Fatalf("prefix %d: noise %d, Σ terms %d", i, got, want)
		}
	}
}

func TestKAryBestK(t *testing.T) {
	p := Params{Bins: 1 << 12, Epsilon: 1}
	best := mustKAry(t, p)
	for k := 2; k <= 64; k++ {
		p.K = k
		if m := mustKAry(t, p); m.MeanVariance() < best.MeanVariance() {
			t.Errorf("k=%d has mean variance %v below the chosen %s's %v", k, m.MeanVariance(), best.Name(), best.MeanVariance())
		}
	}
}

func TestKAryRejectsBadParams(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want string
	}{
		{Params{Bins: 0, Epsilon: 1, K: 3}, "bins 0"},
		{Params{Bins: 1 << 41, Epsilon: 1, K: 3}, "bins 2199023255552"},
		{Params{Bins: 8, Epsilon: -2, K: 3}, "epsilon -2"},
		{Params{Bins: 8, Epsilon: math.NaN(), K: 3}, "epsilon NaN"},
		{Params{Bins: 8, Epsilon: 1, Delta: 2, K: 3}, "delta 2"},
		{Params{Bins: 8, Epsilon: 1, K: 1}, "k 1"},
		{Params{Bins: 8, Epsilon: 1, K: -4}, "k -4"},
		{Params{Bins: 8, Epsilon: 1, K: 5000}, "k 5000"},
		{Params{Bins: 8, Epsilon: 1, K: 3, Relation: Relation(9)}, "Relation(9)"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if _, err := newKAry(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewKAry(%+v) error = %v, want one naming %q", c.p, err, c.want)
			}
		})
	}
	if _, err := newGaussianTree(Params{Bins: 8, Epsilon: 1}); err == nil || !strings.Contains(err.Error(), "delta 0") {
		t.Errorf("NewGaussianTree without δ: error %v, want one naming delta 0", err)
	}
}

// TestKAryApproximate checks Theorem 3's scale: with δ > 0 the scale is
// min(Δ/ε, √Δ/a_{ε,δ}) and Delta reports δ only when the ℓ2 branch wins.
func TestKAryApproximate(t *testing.T) {
	for _, c := range []struct {
		bins, k int
		eps     float64
	}{{1 << 15, 17, 1}, {1 << 15, 17, 0.1}, {1 << 20, 2, 0.05}} {
		t.Run(fmt.Sprintf("N=%d/k=%d/ε=%g", c.bins, c.k, c.eps), func(t *testing.T) {
			m := mustKAry(t, Params{Bins: c.bins, Epsilon: c.eps, Delta: 1e-9, K: c.k})
			l2, err := laplaceL2Scale(math.Sqrt(float64(m.sens)), c.eps, 1e-9)
			if err != nil {
				t.Fatal(err)
			}
			want := math.Min(float64(m.sens)/c.eps, l2)
			scale := m.node.(interface{ Scale() float64 }).Scale()
			if scale != want || (m.Delta() > 0) != (l2 < float64(m.sens)/c.eps) {
				t.Errorf("%+v: scale %v δ %v, want %v (ℓ2 %v)", c, scale, m.Delta(), want, l2)
			}
			if got := laplaceTheorem3Epsilon(float64(m.sens), math.Sqrt(float64(m.sens)), scale, 1e-9); got > c.eps*(1+1e-12) {
				t.Errorf("%+v: Theorem 3 gives ε = %v > %v", c, got, c.eps)
			}
		})
	}
}

func TestGaussianTree(t *testing.T) {
	m, err := newGaussianTree(Params{Bins: 1000, Epsilon: 0.5, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if m.Arity() != 2 || m.Height() != 10 || m.Delta() != 1e-6 || m.Name() != "gaussian-tree" {
		t.Errorf("shape: k=%d h=%d δ=%v name %s", m.Arity(), m.Height(), m.Delta(), m.Name())
	}
	sigma2, _ := discreteGaussianSigma2Float(float64(m.Sensitivity()), 0.5, 1e-6)
	if m.node.(interface{ Sigma2() float64 }).Sigma2() != sigma2 {
		t.Errorf("σ² %v, want Δ/(2ρ) = %v", m.node.(interface{ Sigma2() float64 }).Sigma2(), sigma2)
	}
	const runs = 3000
	var sum float64
	for r := range runs {
		x := float64(termNoise(m, karySeed(r), 999))
		sum += x * x
	}
	want := m.PrefixVariance(999) // Gaussian sum: 4th moment 3σ⁴
	if se := want * math.Sqrt(2.0/runs); math.Abs(sum/runs-want) > 5*se {
		t.Errorf("prefix 999: Monte-Carlo variance %.1f, exact %.1f (s.e. %.1f)", sum/runs, want, se)
	}
}
