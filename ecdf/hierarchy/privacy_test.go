package hierarchy

import (
	"fmt"
	"math"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// tlapPMF returns the exact law of TLap_Z(t, A) on −A..A.
func tlapPMF(d truncatedLaplace) []float64 {
	t, a := d.lap.Scale(), d.limit
	p := make([]float64, 2*a+1)
	z := 0.0
	for k := -a; k <= a; k++ {
		p[k+a] = math.Exp(-math.Abs(float64(k)) / t)
		z += p[k+a]
	}
	for k := range p {
		p[k] /= z
	}
	return p
}

// TestTruncatedLaplacePrivacy checks Lemma 2.8 made discrete exactly:
// for the laws of y + X and y + 1 + X, X ~ TLap_Z(t, A) as built for
// (ε, δ), the hockey-stick divergence Σ_o max(P(o) − e^ε·P′(o), 0) is at
// most δ in both directions, A is the least such limit, and the sampler
// draws that law.
func TestTruncatedLaplacePrivacy(t *testing.T) {
	for _, c := range []struct{ eps, delta float64 }{{1, 1e-6}, {0.1, 1e-9}, {2, 0.05}, {0.013, 1e-7}} {
		d, err := newTruncatedLaplace(c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		p := tlapPMF(d)
		// P(o) of y + X at o = y + k is p[k+A]; of y + 1 + X is p[k−1+A].
		hs := func(a, b func(k int) float64) float64 {
			s := 0.0
			for k := -len(p); k <= len(p); k++ {
				s += max(a(k)-math.Exp(c.eps)*b(k), 0)
			}
			return s
		}
		at := func(k int) float64 {
			if k < 0 || k >= len(p) {
				return 0
			}
			return p[k]
		}
		x := func(k int) float64 { return at(k) }
		y := func(k int) float64 { return at(k - 1) }
		if got := max(hs(x, y), hs(y, x)); got > c.delta {
			t.Errorf("ε=%v δ=%v: A=%d gives divergence %v", c.eps, c.delta, d.limit, got)
		}
		if d.limit > 0 && tlapDelta(d.lap.Scale(), d.limit-1) <= c.delta {
			t.Errorf("ε=%v δ=%v: A=%d is not the least limit", c.eps, c.delta, d.limit)
		}
		if d.lap.Scale() < 1/c.eps {
			t.Errorf("ε=%v: scale %v below 1/ε", c.eps, d.lap.Scale())
		}
	}
	// The sampler: frequencies of TLap_Z for (ε, δ) = (1, 0.05) within 5
	// standard errors of the exact law.
	d, _ := newTruncatedLaplace(1, 0.05)
	p := tlapPMF(d)
	seed := noise.Seed{1}
	src := seed.Stream(1, 1)
	const draws = 40000
	freq := make([]float64, len(p))
	for range draws {
		x := d.Sample(src)
		if x < -d.limit || x > d.limit {
			t.Fatalf("draw %d outside ±%d", x, d.limit)
		}
		freq[x+d.limit]++
	}
	for k := range p {
		if se := math.Sqrt(p[k] * (1 - p[k]) / draws); math.Abs(freq[k]/draws-p[k]) > 5*se+1e-12 {
			t.Errorf("P(X=%d): %v drawn, exact %v", k-int(d.limit), freq[k]/draws, p[k])
		}
	}
}

// lapTail is P(X ≥ x) for X ~ Lap_Z(t): r^x/(1+r) for x ≥ 1, and
// 1 − P(X ≥ 1 − x) below.
func lapTail(t float64, x int64) float64 {
	r := math.Exp(-1 / t)
	if x >= 1 {
		return math.Pow(r, float64(x)) / (1 + r)
	}
	return 1 - math.Pow(r, float64(1-x))/(1+r)
}

// aboveThresholdLaw returns the exact law of one AboveThreshold instance
// on integer queries q against threshold T with threshold noise
// ρ ~ Lap_Z(ts) and query noise ν_i ~ Lap_Z(tq): out[i] = P(first ⊤ at
// query i), out[len(q)] = P(no ⊤), summing ρ over ±bound (the rest has
// mass below lapTail(ts, bound+1)·2).
func aboveThresholdLaw(q []int64, threshold int64, ts, tq float64, bound int64) []float64 {
	out := make([]float64, len(q)+1)
	rs := math.Exp(-1 / ts)
	for rho := -bound; rho <= bound; rho++ {
		w := (1 - rs) / (1 + rs) * math.Pow(rs, math.Abs(float64(rho)))
		alive := w
		for i, qi := range q {
			top := lapTail(tq, threshold+rho-qi) // P(q + ν ≥ T + ρ)
			out[i] += alive * top
			alive *= 1 - top
		}
		out[len(q)] += alive
	}
	return out
}

// TestSparseVectorPrivacy checks exactly that one AboveThreshold
// instance of every round of a schedule, with the round's discrete
// Laplace scales, is (ε_svt/c)-DP: for query streams q and every
// neighbour q′ (each query moved by −1, 0 or +1, as a sensitivity-1 max
// of counts may be), every output's probability ratio is at most
// e^{ε_svt/c} up to the truncated mass of ρ. The Sparse algorithm is c
// such instances in sequence (basic composition).
func TestSparseVectorPrivacy(t *testing.T) {
	p := Params{Bins: 8, Arity: 2, Epsilon: 3, Delta: 1e-3, Alpha: 0.5, Relation: mechanism.AddRemove}
	rounds, err := schedule(p, 4, 200, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, rd := range rounds {
		ts, tq := rd.thresh.Scale(), rd.query.Scale()
		bound := int64(60 * ts)
		tail := 2 * lapTail(ts, bound+1)
		eps := rd.svtEps / float64(rd.cutoff)
		threshold := rd.tau
		for _, q := range [][]int64{{threshold - 3, threshold, threshold + 2}, {threshold + 5, threshold - 8}, {threshold}} {
			moves := 1
			for range q {
				moves *= 3
			}
			law := aboveThresholdLaw(q, threshold, ts, tq, bound)
			for m := range moves {
				q2 := make([]int64, len(q))
				for k, mm := 0, m; k < len(q); k, mm = k+1, mm/3 {
					q2[k] = q[k] + int64(mm%3) - 1
				}
				law2 := aboveThresholdLaw(q2, threshold, ts, tq, bound)
				for o := range law {
					if law[o] > math.Exp(eps)*law2[o]+tail || law2[o] > math.Exp(eps)*law[o]+tail {
						t.Fatalf("round %d, q=%v q′=%v output %d: %v vs %v, ε=%v", i, q, q2, o, law[o], law2[o], eps)
					}
				}
			}
		}
	}
}

// empiricalDivergence draws releases of c on hist and on its neighbour
// and returns the larger empirical hockey-stick divergence
// Σ_o max(P̂(o) − e^eps·P̂′(o), 0) of the two directions and the number
// of distinct outputs.
func empiricalDivergence(t *testing.T, c *CountingOnTrees, x, y []int64, eps float64, draws int) (float64, int) {
	law := func(h []int64, salt byte) map[string]float64 {
		m := map[string]float64{}
		for i := range draws {
			seed := noise.Seed{salt, byte(i), byte(i >> 8), byte(i >> 16)}
			out, err := c.Release(h, seed)
			if err != nil {
				t.Fatal(err)
			}
			m[fmt.Sprint(out)] += 1 / float64(draws)
		}
		return m
	}
	px, py := law(x, 1), law(y, 2)
	keys := map[string]bool{}
	for k := range px {
		keys[k] = true
	}
	for k := range py {
		keys[k] = true
	}
	hs := func(a, b map[string]float64) float64 {
		s := 0.0
		for k := range keys {
			s += max(a[k]-math.Exp(eps)*b[k], 0)
		}
		return s
	}
	return max(hs(px, py), hs(py, px)), len(keys)
}

// TestCountingOnTreesEmpirical plays the analyst on a small tree: it
// draws releases on two neighbours and estimates the hockey-stick
// divergence over the outputs; with ε = 2 and δ = 0.05 it must stay
// below δ plus the sampling error (three times √(K/draws), which bounds
// the standard error of Σ_o |P̂(o) − P(o)| for K outputs). Its power is
// low (the released counts are coarse, so one record rarely changes
// them, and a version with 12 times less noise also passes): it catches
// a release whose outputs separate the neighbours end to end, while the
// exact, factor-2-sensitive check of every noise scale against the
// composition proved in the package documentation is
// TestCountingOnTreesLedger.
func TestCountingOnTreesEmpirical(t *testing.T) {
	const draws = 10000
	for _, rel := range []mechanism.Relation{mechanism.AddRemove, mechanism.ReplaceOne} {
		x, y := []int64{40, 0, 12, 3}, []int64{41, 0, 12, 3}
		if rel == mechanism.ReplaceOne {
			y = []int64{39, 0, 13, 3}
		}
		c, err := NewCountingOnTrees(Params{Bins: 4, Arity: 2, Epsilon: 2, Delta: 0.05, Alpha: 0.5, Relation: rel})
		if err != nil {
			t.Fatal(err)
		}
		got, k := empiricalDivergence(t, c, x, y, 2, draws)
		if slack := 3 * math.Sqrt(float64(k)/draws); got > 0.05+slack || k < 3 {
			t.Errorf("%v: divergence %v over %d outputs (δ + slack %v)", rel, got, k, 0.05+slack)
		}
	}
}
