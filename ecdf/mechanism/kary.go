package mechanism

import (
	"fmt"
	"math/big"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// kary is the k-ary tree mechanism with subtraction of Andersson, Pagh,
// Steiner and Torkamani ("Count on your elders", Algorithm 2; Appendix C
// for even k), and, with digits 0…k−1, their Algorithm 1.
//
// Tree shape. Leaves are the bins 1…k^h (bins beyond N hold nothing); level
// ℓ = 1…h+1 has the nodes [j·k^(ℓ−1)+1, (j+1)·k^(ℓ−1)], whose value is
// the count of instances in those bins. The root (level h+1) is never
// used. Prefix t is written with h balanced digits
//
//	t = Σ_{ℓ=1..h} t_ℓ·k^(ℓ−1),  t_ℓ ∈ [lo, hi],
//
// [lo, hi] = [−(k−1)/2, (k−1)/2] for odd k (Definition 10),
// [−k/2+1, k/2] for even k (Definition 26) and [0, k−1] without
// subtraction (Definition 6); h is the smallest height whose largest
// representable value T_h = hi·(k^h−1)/(k−1) is at least N. The walk
// of t (Algorithm 2, line 11) goes from p = 0, level h down to 1: a
// digit t_ℓ > 0 adds the t_ℓ nodes [p+1, p+k^(ℓ−1)], p += k^(ℓ−1) after
// each; t_ℓ < 0 subtracts |t_ℓ| nodes [p−k^(ℓ−1)+1, p], p −= k^(ℓ−1)
// after each. The walk ends at p = t and uses ‖t‖₁ = Σ|t_ℓ| nodes. A
// node is keyed by p right after its step (Proposition 12): keys are
// 1…T_h, each node appears in every walk with the same sign.
//
// Noise. Every used node gets an independent exact discrete Laplace
// Lap_Z(b), b = Unit·Δ/ε rounded up to an exactly sampled scale (package
// noise), all drawn by NewRelease; prefix t is the signed sum of its
// walk's noisy nodes, so its variance is exactly ‖t‖₁·2r/(1−r)²,
// r = e^{−1/b} (Lemma 14 with the discrete Laplace variance in place of
// 2(Δ/ε)²).
//
// Privacy. The released prefixes are a post-processing of the noisy
// used-node values; a neighbour shifts the vector of true used-node
// values by an integer vector χ, and the release is ε-DP when
// ‖χ‖₁ ≤ Δ (Lemma 13).
//   - Add/remove (the paper's relation): an instance lies in one node per
//     level below the root, so ‖χ‖₁ ≤ h; bin 1 lies in h used nodes, so
//     Δ = h exactly.
//   - Replace-one: moving an instance from bin a to bin b shifts by ±1
//     exactly the used nodes containing one of a, b but not both, so
//     Δ = max_{a≠b ≤ N} |U(a) △ U(b)|, U(x) the used nodes containing x.
//     Below the level where a and b first share a node the two paths are
//     disjoint, above it they coincide, so Δ = max over nodes v of the
//     sum of the two largest g(c) over distinct children c of v, where
//     g(c) counts the used nodes on the path from a bin x ≤ N up to c.
//     A node with key p and lowest nonzero digit d at level ℓ is used by
//     exactly the prefixes sharing p's digits above ℓ with t_ℓ between d
//     and hi (d > 0) or lo and d (d < 0): an interval of integers that
//     contains p ≥ 1, so the node is used iff its least element is at
//     most N. The dynamic programme costs O(N·k/(k−1)). Δ ≤ 2h, with
//     equality for most N (2h − 1 when k = 3: only one child of the root
//     is used); kary_test.go checks it against every pair for small k, N.
//
// With δ > 0 and ε ≤ 1 the node scale is instead Unit·min(Δ/ε,
// Δ₂/a_{ε,δ}) (Theorem 3 via Lemma 21, laplaceL2Scale), Δ₂ = √Δ since χ
// has ±1 entries; the release is then (ε, δ)-DP and Delta reports δ.
// Unit multiplies the scale, not ε: Lemma 21's scale is not
// proportional to 1/ε.
type kary struct {
	bins, k, h int
	lo, hi     int // digit range
	pow        []int
	maxKey     int // T_h
	epsilon    float64
	delta      float64 // δ of the guarantee (0: pure ε-DP)
	relation   Relation
	sens       int // Δ = max ‖χ‖₁ = max ‖χ‖₂² over neighbours
	node       nodeSampler
	normSum    int64 // Σ_{t=1..N} ‖t‖₁
	name       string
	domain     uint32
	keysOnce   sync.Once
	keys       []int // sorted keys of the used nodes (usedKeys), on first release
}

// nodeSampler is an exact integer noise distribution of package noise.
type nodeSampler interface {
	noise.FixedWorkSampler
	Variance() float64
}

const (
	// karyNoiseDomain and gaussianTreeNoiseDomain separate the node
	// streams of the two mechanisms built on kary: ASCII "kary", "gtre".
	karyNoiseDomain         uint32 = 0x6b617279
	gaussianTreeNoiseDomain uint32 = 0x67747265
	// maxArity bounds k (and maxKAryBins N) so that k^(h+1) < 2^62.
	maxArity    = 1024
	maxKAryBins = 1 << 40
)

// newKAry returns the k-ary tree mechanism with subtraction for p.Bins
// prefixes, k = p.K (odd or even, 2 ≤ k ≤ 1024; 0 picks the k with the
// smallest MeanVariance), ε = p.Epsilon under p.Relation, with p.Unit
// integer units per record. With p.Delta = 0 it is pure ε-DP; with
// δ = p.Delta > 0 it uses Theorem 3's scale when that is smaller (see
// kary). It returns an error wrapping ErrNoiseTooLarge if the prefix
// noise would exceed maxPrefixStdDev.
func newKAry(p Params) (*kary, error) {
	if err := checkParams("kary", p); err != nil {
		return nil, err
	}
	if p.K == 0 {
		return bestKAry(p)
	}
	if p.K < 2 || p.K > maxArity {
		return nil, fmt.Errorf("kary: k %d: must be 0 (best) or between 2 and %d", p.K, maxArity)
	}
	lo, hi := -(p.K-1)/2, p.K/2 // odd: ±(k−1)/2; even: −k/2+1 … k/2
	m := newKAryShape(p, p.K, lo, hi)
	scale, delta := laplaceNodeScale(m.sens, p.Epsilon, p.Delta, p.unit())
	if err := checkNoise("kary", p, float64(m.h*m.hi)*2*scale*scale); err != nil { // ‖t‖₁ ≤ h·hi, hi ≥ |lo|
		return nil, err
	}
	node, err := noise.NewDiscreteLaplace(scale)
	if err != nil {
		return nil, fmt.Errorf("kary: epsilon %v with sensitivity %d: %w", p.Epsilon, m.sens, err)
	}
	m.node, m.delta, m.domain = node, delta, karyNoiseDomain
	m.name = fmt.Sprintf("kary(k=%d)", p.K)
	if delta > 0 {
		m.name = fmt.Sprintf("kary(k=%d,l2)", p.K)
	}
	return m, nil
}

// laplaceNodeScale is Theorem 3's node scale for ℓ1 sensitivity Δ (and
// ℓ2 sensitivity √Δ) in units of unit: unit·Δ/ε for pure ε-DP, or
// unit·(Lemma 21's Δ₂/a_{ε,δ}) when δ > 0, ε ≤ 1 and it is smaller, each
// rounded up to an exactly sampled scale. It returns the δ of the
// guarantee.
func laplaceNodeScale(sens int, epsilon, delta float64, unit uint64) (scale, guaranteeDelta float64) {
	pure := laplaceScale(unit, big.NewRat(int64(sens), 1), ratOf(epsilon))
	if delta <= 0 || epsilon > 1 {
		return pure, 0
	}
	l2, err := laplaceL2Scale(sqrtUp(sens), epsilon, delta)
	if err != nil {
		return pure, 0
	}
	if scale := laplaceScale(unit, ratOf(l2), big.NewRat(1, 1)); scale < pure {
		return scale, delta
	}
	return pure, 0
}

// bestKAry builds newKAry for every k from 2 to min(64, 2N+1) and keeps
// the one of least MeanVariance (the smaller k on ties).
func bestKAry(p Params) (*kary, error) {
	var best *kary
	for k := 2; k <= min(64, 2*p.Bins+1); k++ {
		q := p
		q.K = k
		m, err := newKAry(q)
		if err != nil {
			return nil, err
		}
		if best == nil || m.MeanVariance() < best.MeanVariance() {
			best = m
		}
	}
	return best, nil
}

// newKAryShape computes the tree, the sensitivity and Σ‖t‖₁ of a k-ary
// mechanism with digits lo…hi; the caller sets the node noise.
func newKAryShape(p Params, k, lo, hi int) *kary {
	m := &kary{bins: p.Bins, k: k, lo: lo, hi: hi, epsilon: p.Epsilon, relation: p.Relation, pow: []int{1}}
	for m.maxKey = 0; m.maxKey < p.Bins; m.h++ {
		m.pow = append(m.pow, m.pow[m.h]*k)
		m.maxKey = hi * (m.pow[m.h+1] - 1) / (k - 1)
	}
	m.pow = append(m.pow, m.pow[m.h]*k) // k^(h+1), the root's size
	addRemove, replace := m.sensitivities()
	m.sens = max(replace, 1) // N = 1 has no two distinct bins
	if p.Relation == AddRemove {
		m.sens = addRemove
	}
	m.normSum = m.digitNormSum(int64(p.Bins))
	return m
}

// Digits returns the h balanced digits of t, least significant first.
func (m *kary) Digits(t int) []int {
	d := make([]int, m.h)
	for l := range d {
		r := t % m.k // t ≥ 0 throughout
		if r > m.hi {
			r -= m.k
		}
		d[l] = r
		t = (t - r) / m.k
	}
	return d
}

// walk calls visit(key, sign) for every node of prefix t's walk, in order.
func (m *kary) walk(t int, visit func(key, sign int)) {
	digits := m.Digits(t)
	p := 0
	for l := m.h - 1; l >= 0; l-- {
		w := m.pow[l]
		for d := digits[l]; d > 0; d-- {
			p += w
			visit(p, 1)
		}
		for d := digits[l]; d < 0; d++ {
			p -= w
			visit(p, -1)
		}
	}
}

// used reports whether node j of level l (1-based level) is used by some
// prefix t ≤ N (see kary, Privacy).
func (m *kary) used(l, j int) bool {
	w := m.pow[l-1]
	c := j % m.k
	var d, key int
	switch {
	case c < m.hi:
		d, key = c+1, (j+1)*w
	case c > m.hi:
		d, key = c-m.k, j*w
	default:
		return false // child hi is never a step of a walk
	}
	if key < 1 || key > m.maxKey {
		return false
	}
	first := d // least digit t_ℓ of a prefix through this node
	if d < 0 {
		first = m.lo
	}
	least := key - d*w + first*w + m.lo*(w-1)/(m.k-1)
	return least <= m.bins
}

// sensitivities returns the exact ℓ1 sensitivities of the used-node
// vector: max_x |U(x)| (add/remove) and max_{a≠b} |U(a) △ U(b)|
// (replace-one), by the dynamic programme of kary (Privacy).
func (m *kary) sensitivities() (addRemove, replace int) {
	g := make([]int, m.bins) // level 1: g(leaf) = [leaf used]
	for j := range g {
		g[j] = b2int(m.used(1, j))
	}
	for l := 2; l <= m.h+1; l++ {
		parents := make([]int, (len(g)+m.k-1)/m.k)
		for jp := range parents {
			first, second := -1, -1
			for j := jp * m.k; j < min((jp+1)*m.k, len(g)); j++ {
				if g[j] > first {
					first, second = g[j], first
				} else if g[j] > second {
					second = g[j]
				}
			}
			if second >= 0 {
				replace = max(replace, first+second)
			}
			parents[jp] = first
			if l <= m.h {
				parents[jp] += b2int(m.used(l, jp))
			}
		}
		g = parents
	}
	return g[0], replace
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// digitNormSum returns Σ_{t=1..n} ‖t‖₁. With off = −lo·(k^h−1)/(k−1),
// t + off has the ordinary base-k digits t_ℓ − lo, so it counts each
// digit value at each position over [off+1, off+n].
func (m *kary) digitNormSum(n int64) int64 {
	off := int64(-m.lo) * int64(m.pow[m.h]-1) / int64(m.k-1)
	return m.digitCount(off+n+1) - m.digitCount(off+1)
}

// digitCount returns Σ_{u=0..M−1} Σ_ℓ |e_ℓ(u) + lo|, e_ℓ the base-k
// digits of u.
func (m *kary) digitCount(bound int64) int64 {
	var s int64
	k := int64(m.k)
	for l := 0; l < m.h; l++ {
		w := int64(m.pow[l])
		full, rest := bound/(w*k), bound%(w*k)
		for e := int64(0); e < k; e++ {
			count := full*w + min(max(rest-e*w, 0), w)
			s += count * absInt64(e+int64(m.lo))
		}
	}
	return s
}

func absInt64(x int64) int64 { return max(x, -x) }

// Name returns "kary(k=…)" ("gaussian-tree" for the Gaussian baseline).
func (m *kary) Name() string { return m.name }

// Bins returns N.
func (m *kary) Bins() int { return m.bins }

// Epsilon returns ε of the guarantee under Relation.
func (m *kary) Epsilon() float64 { return m.epsilon }

// Delta returns δ of the guarantee: 0 when the release is pure ε-DP.
func (m *kary) Delta() float64 { return m.delta }

// Relation returns the neighbouring relation of the guarantee.
func (m *kary) Relation() Relation { return m.relation }

// Arity returns k.
func (m *kary) Arity() int { return m.k }

// Height returns h, the number of levels below the (unused) root.
func (m *kary) Height() int { return m.h }

// Sensitivity returns Δ, the largest ‖χ‖₁ (= ‖χ‖₂²) of a neighbour's
// shift of the used-node vector under Relation.
func (m *kary) Sensitivity() int { return m.sens }

// NodeVariance returns the exact variance of one node noise.
func (m *kary) NodeVariance() float64 { return m.node.Variance() }

// PrefixVariance returns ‖t‖₁·NodeVariance() for prefix t = i.
func (m *kary) PrefixVariance(i int) float64 {
	m.checkPrefix(i)
	var n int
	for _, d := range m.Digits(i) {
		n += max(d, -d)
	}
	return float64(n) * m.NodeVariance()
}

// MeanVariance returns NodeVariance()·(1/N)·Σ_{t=1..N} ‖t‖₁, the exact
// mean of PrefixVariance (Lemma 14 when N = T_h, odd k).
func (m *kary) MeanVariance() float64 {
	return m.NodeVariance() * m.MeanNodesPerPrefix()
}

// MeanNodesPerPrefix returns (1/N)·Σ_{t=1..N} ‖t‖₁, the mean number of
// node noises a prefix sums.
func (m *kary) MeanNodesPerPrefix() float64 { return float64(m.normSum) / float64(m.bins) }

// Nodes returns T_h: nodes are keyed 1…T_h and numbered key − 1. Keys
// used by no prefix t ≤ N never get noise (a release draws the used
// ones only).
func (m *kary) Nodes() int { return m.maxKey }

// Terms appends the ‖i‖₁ nodes of prefix i's walk with coefficients ±1.
// It panics unless 1 ≤ i ≤ N, as an out-of-range index does.
func (m *kary) Terms(i int, dst []Term) []Term {
	m.checkPrefix(i)
	m.walk(i, func(key, sign int) { dst = append(dst, Term{Node: key - 1, Coef: float64(sign)}) })
	return dst
}

func (m *kary) checkPrefix(i int) {
	if i < 1 || i > m.bins {
		panic(fmt.Sprintf("%s: prefix %d out of range [1, %d]", m.name, i, m.bins))
	}
}

// NewRelease draws the noise of every node some prefix t ≤ N uses, node
// key − 1 from noise.Seed(seed).Stream(domain, key − 1).
func (m *kary) NewRelease(seed [32]byte) Release { return m.release(seed, true) }

func (m *kary) release(seed [32]byte, fixed bool) Release {
	m.keysOnce.Do(func() { m.keys = m.usedKeys() })
	keys := m.keys
	return &karyRelease{m: m, keys: keys,
		vals: drawNodes(seed, m.domain, len(keys), func(j int) int { return keys[j] - 1 }, func(int) sampler { return m.node }, fixed)}
}

// usedKeys returns the sorted keys of the nodes visited by the walk of
// some prefix t ∈ [1, N], by a depth-first search over the digits from
// the most significant down. With p the value of the digits above level
// ℓ (width w = k^(ℓ−1)), digit d is feasible if some t ∈ [1, N] has
// these digits, i.e. p + d·w plus the range [lo, hi]·(w − 1)/(k − 1) of
// the lower digits meets [1, N]; the feasible digits form an interval
// [dlo, dhi], and the walks through p visit the keys p + s·w for
// s = 1…dhi and s = dlo…−1 (a digit d steps through s = 1…d or
// s = −1…d). Balanced digits are unique, so every key is visited once;
// the search costs O(N + h·k).
func (m *kary) usedKeys() []int {
	var keys []int
	var search func(l, p int)
	search = func(l, p int) {
		w := m.pow[l]
		restLo, restHi := m.lo*(w-1)/(m.k-1), m.hi*(w-1)/(m.k-1)
		dlo, dhi := 0, 0
		for d := m.lo; d <= m.hi; d++ {
			q := p + d*w
			if q+restHi < 1 || q+restLo > m.bins {
				continue
			}
			dlo, dhi = min(dlo, d), max(dhi, d)
			if l > 0 {
				search(l-1, q)
			}
		}
		for s := dlo; s <= dhi; s++ {
			if s != 0 {
				keys = append(keys, p+s*w)
			}
		}
	}
	search(m.h-1, 0)
	slices.Sort(keys)
	return keys
}

// karyRelease holds the noise of every used node of one release, vals[j]
// that of key keys[j]. It is read-only, hence safe for concurrent use.
type karyRelease struct {
	m    *kary
	keys []int
	vals []int64
}

// PrefixNoise returns Σ ±η over the walk of prefix i. It panics unless
// 1 ≤ i ≤ N.
func (r *karyRelease) PrefixNoise(i int) int64 {
	r.m.checkPrefix(i)
	var sum int64
	r.m.walk(i, func(key, sign int) {
		j, _ := slices.BinarySearch(r.keys, key)
		sum += int64(sign) * r.vals[j]
	})
	return sum
}

// newGaussianTree returns the (ε, δ)-DP baseline "gaussian-tree": the
// binary tree of Algorithm 1 (k = 2, digits 0/1, h = ⌈log2(N+1)⌉, only
// left children used), each used node with an exact discrete Gaussian
// N_Z(0, σ²). The shift χ of the used-node vector has ±1 entries, so
// ‖χ‖₂² = Δ (computed as for kary); σ² = Unit²·Δ/(2ρ), rounded up to an
// exactly sampled value, with ρ the largest zCDP parameter that converts
// to (ε, δ) (discreteGaussianSigma2). p.Delta must be in (0, 1).
func newGaussianTree(p Params) (*kary, error) {
	if err := checkParams("gaussian-tree", p); err != nil {
		return nil, err
	}
	if p.Delta <= 0 {
		return nil, fmt.Errorf("gaussian-tree: delta %v: an (ε, δ) mechanism needs δ in (0, 1)", p.Delta)
	}
	m := newKAryShape(p, 2, 0, 1)
	sigma2, err := discreteGaussianSigma2(p.unit(), big.NewRat(int64(m.sens), 1), p.Epsilon, p.Delta)
	if err != nil {
		return nil, fmt.Errorf("gaussian-tree: %w", err)
	}
	if err := checkNoise("gaussian-tree", p, float64(m.h)*sigma2); err != nil { // ‖t‖₁ ≤ h
		return nil, err
	}
	node, err := noise.NewDiscreteGaussian(sigma2)
	if err != nil {
		return nil, fmt.Errorf("gaussian-tree: epsilon %v, delta %v: %w", p.Epsilon, p.Delta, err)
	}
	m.node, m.delta, m.domain, m.name = node, p.Delta, gaussianTreeNoiseDomain, "gaussian-tree"
	return m, nil
}
