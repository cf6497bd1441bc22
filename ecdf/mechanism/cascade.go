package mechanism

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// cascade is Cascade Sampling (cascade-sampling Algorithm 1): consistent,
// correlated Gaussian noise on the perfect binary tree over 2^L bins,
// L = ⌈log2 N⌉, added to the histogram, so that every node and every
// prefix is the exact sum of its noisy bins.
//
// Algorithm 1 draws the root X_∅ ~ N(0, σ²) and, at each internal node
// v, Y_v ~ N(0, σ²) and X_{v0} = X_v/2 + (√3/2)Y_v, X_{v1} = X_v/2 −
// (√3/2)Y_v; the leaves are the noise of the bins. Every node then has
// variance σ² (Theorem 3.3), siblings covariance −σ²/2 and two leaves
// whose lowest common ancestor is at height h covariance −σ²·2^{−(2h−1)}
// (Definition 3.1, Proposition 3.5).
//
// Exact integer sampling. We draw R = X_∅ ~ N_Z(0, σ²) and D_v =
// √3·Y_v = X_{v0} − X_{v1} ~ N_Z(0, 3σ²), exact discrete Gaussians
// (package noise) from Seed.Stream("casc", node): node 0 is R, node
// v = 1…2^L−1 (heap order: root 1, children 2v, 2v+1) is D_v. Every
// node value is then a dyadic rational, X_v = R/2^d + Σ ±D_u/2^{d−d(u)}
// over its ancestors u, and prefix t has the exact value
//
//	S_t = (t·R + Σ_{d=0..L−1} 2^d·min(a_d, s_d − a_d)·D_{v_d}) / 2^L,
//
// v_d the depth-d node containing bin t, s_d = 2^{L−d} its size and
// a_d the number of its bins ≤ t. The release is round(c_t + S_t) =
// c_t + round(S_t) (counts are integers), rounding half to even.
//
// Privacy. Leaves x + noise are an invertible linear image of
// (Σx + R, (x(v0) − x(v1)) + D_v): the integer statistics total and
// left-minus-right differences plus independent discrete Gaussians.
// A neighbour shifts them by an integer vector s, so the release is
// ρ-zCDP with ρ = Σ s_j²/(2σ_j²) = M/(2σ²) (CKS20 Thm 4 and
// composition), M = s_R² + Σ s_v²/3 = max ΔᵀC⁻¹Δ (C the leaf
// correlation matrix of Definition 3.1):
//   - add/remove one instance in bin a: s_R = 1 and s_v = ±1 on the L
//     ancestors of a, so M = 1 + L/3 (Corollary B.3, Theorem 3.9);
//   - replace-one, a → b with lowest common ancestor at height h: s_R = 0,
//     the ancestor at height h shifts by ±2, the h−1 nodes below it on
//     each side by ±1, those above by 0, so M = (4 + 2(h−1))/3, largest
//     at h = L: M = 2(L+1)/3 (about twice the add/remove value).
//
// σ² = M/(2ρ) with ρ = zcdpRho(ε, δ) (discreteGaussianSigma2); for ε ≤ 1
// it is below Theorem 3.8's continuous bound 2M·ln(2/δ)/ε². With Unit
// integer units per record (Params.Unit) a record shifts the statistics
// by at most Unit times as much, so R has σ_R² = Unit²·M/(2ρ) and D
// σ_D² = 3·Unit²·M/(2ρ), each computed exactly from the rational M and
// rounded up to an exactly sampled value (never below its target, so
// ρ = Σ s_j²/(2σ_j²) stays at most the target).
//
// Variance. Var(S_t) = Var(R)(t/2^L)² + Var(D)·Σ_d (min(a_d, s_d−a_d)/s_d)²
// with the exact discrete variances. The rounding error e = round(S_t) −
// S_t is uniform on the 2^m points of (2^{−m})Z in (−1/2, 1/2], m = L −
// v2(t) (v2 the 2-adic valuation; m = 0 when t = 2^L): for each frequency
// a depth-d D has a half-integer coefficient, so the characteristic
// function of S_t mod 1 is bounded by E[(−1)^D] ≈ 2e^{−3π²σ²/2}, and e
// is uncorrelated with S_t (ties round to even, so E[e | S_t] does not
// lean on S_t's sign). Hence PrefixVariance = Var(S_t) + (4^m + 2)/(12·4^m)
// for m ≥ 1 (1/12 in the limit, 1/8 for m = 1), up to that e^{−3π²σ²/2}.
//
// Release. NewRelease draws all 2^L variables R and D_v, each from its
// own stream; a prefix needs R and the L values D on the path of bin t.
// 2^L·S_t is summed exactly in 128-bit arithmetic and the rounded noise
// returned modulo 2^64, the share domain (it fits an int64 except with
// negligible probability, see maxPrefixStdDev).
type cascade struct {
	bins, levels     int
	epsilon, delta   float64
	relation         Relation
	mahalanobis      float64 // M = max ΔᵀC⁻¹Δ
	sigma2           float64
	root, diff       *noise.DiscreteGaussian
	rootVar, diffVar float64
	meanVariance     float64
}

const (
	// cascadeNoiseDomain is the ASCII "casc".
	cascadeNoiseDomain uint32 = 0x63617363
	// maxCascadeBins keeps the coefficients of 2^L·S_t below 2^31.
	maxCascadeBins = 1 << 30
)

// newCascade returns Cascade Sampling for p.Bins prefixes, (ε, δ) =
// (p.Epsilon, p.Delta) under p.Relation, with p.Unit integer units per
// record; δ must be in (0, 1). It returns an error wrapping
// ErrNoiseTooLarge if the prefix noise would exceed maxPrefixStdDev.
func newCascade(p Params) (*cascade, error) {
	if err := checkParams("cascade", p); err != nil {
		return nil, err
	}
	if p.Bins > maxCascadeBins {
		return nil, fmt.Errorf("cascade: bins %d: must be at most 2^30", p.Bins)
	}
	if p.Delta <= 0 {
		return nil, fmt.Errorf("cascade: delta %v: an (ε, δ) mechanism needs δ in (0, 1)", p.Delta)
	}
	L := bits.Len(uint(p.Bins - 1))
	c := &cascade{bins: p.Bins, levels: L, epsilon: p.Epsilon, delta: p.Delta, relation: p.Relation,
		mahalanobis: cascadeMahalanobisFloat(L, p.Relation)}
	rho, err := zcdpRho(p.Epsilon, p.Delta)
	if err != nil {
		return nil, fmt.Errorf("cascade: %w", err)
	}
	m := cascadeMahalanobis(L, p.Relation)
	c.sigma2 = gaussianSigma2(p.unit(), m, rho)
	diffSigma2 := gaussianSigma2(p.unit(), m.Mul(m, big.NewRat(3, 1)), rho)
	// Var(S_t) ≤ σ_R² + σ_D²·L/4, plus the rounding's 1/8.
	if err := checkNoise("cascade", p, c.sigma2+diffSigma2*float64(L)/4+1.0/8); err != nil {
		return nil, err
	}
	if c.root, err = noise.NewDiscreteGaussian(c.sigma2); err != nil {
		return nil, fmt.Errorf("cascade: %w", err)
	}
	if c.diff, err = noise.NewDiscreteGaussian(diffSigma2); err != nil {
		return nil, fmt.Errorf("cascade: %w", err)
	}
	c.rootVar, c.diffVar = c.root.Variance(), c.diff.Variance()
	var sum float64
	for t := 1; t <= c.bins; t++ {
		sum += c.PrefixVariance(t)
	}
	c.meanVariance = sum / float64(c.bins)
	return c, nil
}

// cascadeMahalanobisFloat returns M = max ΔᵀC⁻¹Δ over neighbours for the
// tree of height L: 1 + L/3 (add/remove), 2(L+1)/3 (replace-one, L ≥ 1;
// with L = 0 there is a single bin and no two distinct values, and 1 is
// returned).
func cascadeMahalanobisFloat(L int, r Relation) float64 {
	m, _ := cascadeMahalanobis(L, r).Float64()
	return m
}

// cascadeMahalanobis is cascadeMahalanobis as an exact rational:
// (L + 3)/3 or 2(L + 1)/3.
func cascadeMahalanobis(L int, r Relation) *big.Rat {
	if r == AddRemove || L == 0 {
		return big.NewRat(int64(L+3), 3)
	}
	return big.NewRat(int64(2*(L+1)), 3)
}

// Name returns "cascade".
func (c *cascade) Name() string { return "cascade" }

// Bins returns N.
func (c *cascade) Bins() int { return c.bins }

// Epsilon returns ε of the (ε, δ) guarantee.
func (c *cascade) Epsilon() float64 { return c.epsilon }

// Delta returns δ of the (ε, δ) guarantee.
func (c *cascade) Delta() float64 { return c.delta }

// Relation returns the neighbouring relation of the guarantee.
func (c *cascade) Relation() Relation { return c.relation }

// Levels returns L = ⌈log2 N⌉.
func (c *cascade) Levels() int { return c.levels }

// Sigma2 returns σ², the variance parameter of the root and of every Y_v
// (in integer units: Unit²·M/(2ρ), rounded up).
func (c *cascade) Sigma2() float64 { return c.sigma2 }

// Mahalanobis returns M = max ΔᵀC⁻¹Δ, the squared ℓ2 sensitivity in
// whitened units (see cascadeMahalanobis).
func (c *cascade) Mahalanobis() float64 { return c.mahalanobis }

// NodeVariance returns Var(R) = Var(N_Z(0, σ²)); the variables of Terms
// (R and the scaled D_v) all have this variance.
func (c *cascade) NodeVariance() float64 { return c.rootVar }

// Nodes returns 2^L: R and the 2^L − 1 differences D_v.
func (c *cascade) Nodes() int { return 1 << c.levels }

// coefficients calls visit(node, coef) for the nonzero integer
// coefficients of 2^L·S_t on R (node 0) and the D_v (node v).
func (c *cascade) coefficients(t int, visit func(node int, coef int64)) {
	visit(0, int64(t))
	L := c.levels
	for d := 0; d < L; d++ {
		j := (t - 1) >> (L - d)
		a := t - j<<(L-d)
		if m := min(a, 1<<(L-d)-a); m > 0 {
			visit(1<<d+j, int64(m)<<d)
		}
	}
}

// Terms appends the terms of the real-valued prefix noise S_t (before
// rounding) on independent variables of variance NodeVariance(): node
// 0 is R, node v is D_v·√(Var R/Var D) with its coefficient scaled up
// accordingly. It panics unless 1 ≤ i ≤ N.
func (c *cascade) Terms(i int, dst []Term) []Term {
	c.checkPrefix(i)
	unit := math.Ldexp(1, -c.levels)
	scale := math.Sqrt(c.diffVar / c.rootVar)
	c.coefficients(i, func(node int, coef int64) {
		f := float64(coef) * unit
		if node > 0 {
			f *= scale
		}
		dst = append(dst, Term{Node: node, Coef: f})
	})
	return dst
}

// PrefixVariance returns Var(S_i) + the rounding variance (see Cascade).
func (c *cascade) PrefixVariance(i int) float64 {
	c.checkPrefix(i)
	unit := math.Ldexp(1, -c.levels)
	var v float64
	c.coefficients(i, func(node int, coef int64) {
		f := float64(coef) * unit
		if node == 0 {
			v += c.rootVar * f * f
		} else {
			v += c.diffVar * f * f
		}
	})
	return v + roundingVariance(c.levels-min(bits.TrailingZeros(uint(i)), c.levels))
}

// roundingVariance is E[e²] for e uniform on the 2^m points of
// (2^{−m})Z in (−1/2, 1/2]: (4^m + 2)/(12·4^m), and 0 for m = 0.
func roundingVariance(m int) float64 {
	if m == 0 {
		return 0
	}
	return 1.0/12 + math.Ldexp(1, -2*m)/6
}

// MeanVariance returns the mean of PrefixVariance over i = 1…N.
func (c *cascade) MeanVariance() float64 { return c.meanVariance }

func (c *cascade) checkPrefix(i int) {
	if i < 1 || i > c.bins {
		panic(fmt.Sprintf("cascade: prefix %d out of range [1, %d]", i, c.bins))
	}
}

// NewRelease draws all 2^L variables of a release, R (node 0) and D_v
// (node v), from noise.Seed(seed).Stream(domain "casc", node).
func (c *cascade) NewRelease(seed [32]byte) Release { return c.release(seed, true) }

func (c *cascade) release(seed [32]byte, fixed bool) Release {
	return &cascadeRelease{c: c, vars: drawNodes(seed, cascadeNoiseDomain, c.Nodes(), identity, func(node int) sampler {
		if node == 0 {
			return c.root
		}
		return c.diff
	}, fixed)}
}

// cascadeRelease holds R (vars[0]) and every D_v (vars[v]) of one
// release. It is read-only, hence safe for concurrent use.
type cascadeRelease struct {
	c    *cascade
	vars []int64
}

// PrefixNoise returns round(S_i), ties to even, modulo 2^64. It panics
// unless 1 ≤ i ≤ N.
func (r *cascadeRelease) PrefixNoise(i int) int64 {
	r.c.checkPrefix(i)
	return r.scaledPrefix(i).roundDyadic(r.c.levels)
}

// scaledPrefix returns 2^L·S_t exactly.
func (r *cascadeRelease) scaledPrefix(t int) int128 {
	var num int128
	r.c.coefficients(t, func(node int, coef int64) { num.addMul(uint64(coef), r.vars[node]) })
	return num
}

// int128 is a signed 128-bit integer in two's complement, hi:lo.
type int128 struct{ hi, lo uint64 }

// addMul adds c·v to x.
func (x *int128) addMul(c uint64, v int64) {
	hi, lo := bits.Mul64(c, uint64(v))
	if v < 0 {
		hi -= c // uint64(v) = v + 2^64
	}
	var carry uint64
	x.lo, carry = bits.Add64(x.lo, lo, 0)
	x.hi += hi + carry
}

// roundDyadic returns x/2^L (0 ≤ L ≤ 62) rounded to the nearest integer,
// ties to even, modulo 2^64, without branching on x (the answer's time
// must not depend on the noise).
func (x int128) roundDyadic(L int) int64 {
	if L == 0 {
		return int64(x.lo)
	}
	q := x.lo>>L | x.hi<<(64-L) // ⌊x/2^L⌋ mod 2^64
	rem := x.lo & (1<<L - 1)
	half := uint64(1) << (L - 1)
	above := (half - rem) >> 63     // rem > half (both below 2^62)
	tie := ((rem ^ half) - 1) >> 63 // rem = half
	return int64(q + (above | tie&q&1))
}
