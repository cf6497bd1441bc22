package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// span is a range count of a prefix mechanism's release: its noise is
// PrefixNoise(hi) − PrefixNoise(lo) (PrefixNoise(0) = 0), its truth the
// true count of bins [lo, hi).
type span struct {
	lo, hi int
	truth  float64
}

// lawKey names the law of a span's noise. When m's Terms describe its
// noise exactly (exact), it is the multiset of |coefficients| of the node
// noises in prefix hi minus prefix lo: the node noises are independent
// and symmetric, so spans with equal keys have equal noise laws. Else
// (cascade, whose Terms omit the rounding to an integer, a variance below
// 1/4) it is the variance the Terms give, to 9 digits: its noise is a sum
// of independent discrete Gaussians with σ in the tens, so spans of equal
// variance have laws equal up to the discreteness and the rounding, an
// approximation.
func lawKey(m mechanism.Mechanism, s span, exact bool) string {
	if !exact {
		return fmt.Sprintf("v%.9g", hierarchy.RangeVariance(m, s.lo, s.hi))
	}
	coef := map[int]float64{}
	for _, tm := range m.Terms(s.hi, nil) {
		coef[tm.Node] += tm.Coef
	}
	if s.lo > 0 {
		for _, tm := range m.Terms(s.lo, nil) {
			coef[tm.Node] -= tm.Coef
		}
	}
	abs := make([]float64, 0, len(coef))
	for _, c := range coef {
		if c != 0 {
			abs = append(abs, math.Abs(c))
		}
	}
	slices.Sort(abs)
	var b strings.Builder
	for _, a := range abs {
		fmt.Fprintf(&b, "%g,", a)
	}
	return b.String()
}

// law is the pooled sample of |η| of the spans of one key, sorted, with
// suffix sums of |η| and |η|².
type law struct {
	abs     []float64
	sum, sq []float64 // sum[k] = Σ_{i≥k} abs[i], sq likewise of squares
	meanAbs float64
}

// newLaw sorts the sample and builds its suffix sums.
func newLaw(abs []float64) *law {
	slices.Sort(abs)
	l := &law{abs: abs, sum: make([]float64, len(abs)+1), sq: make([]float64, len(abs)+1)}
	for k := len(abs) - 1; k >= 0; k-- {
		l.sum[k], l.sq[k] = l.sum[k+1]+abs[k], l.sq[k+1]+abs[k]*abs[k]
	}
	l.meanAbs = l.sum[0] / float64(len(abs))
	return l
}

// mse is the sample mean of max(|η| − s, 0)²: over the |η| > s,
// Σ|η|² − 2s·Σ|η| + s²·count, divided by the sample size.
func (l *law) mse(s float64) float64 {
	k, _ := slices.BinarySearch(l.abs, math.Nextafter(s, math.Inf(1)))
	for k < len(l.abs) && l.abs[k] <= s {
		k++
	}
	n := float64(len(l.abs) - k)
	return max(l.sq[k]-2*s*l.sum[k]+s*s*n, 0) / float64(len(l.abs))
}

// pooledLaws draws runs releases of m from rng and returns, for every
// key of keys (one per span), the pooled law of the noise of its spans.
func pooledLaws(m mechanism.Mechanism, spans []span, keys []string, runs int, rng *rand.Rand) map[string]*law {
	samples := map[string][]float64{}
	for range runs {
		var seed [32]byte
		for j := 0; j < 32; j += 8 {
			binary.LittleEndian.PutUint64(seed[j:], rng.Uint64())
		}
		rel := m.NewRelease(seed)
		at := func(i int) float64 {
			if i == 0 {
				return 0
			}
			return float64(rel.PrefixNoise(i))
		}
		for k, s := range spans {
			samples[keys[k]] = append(samples[keys[k]], math.Abs(at(s.hi)-at(s.lo)))
		}
	}
	laws := make(map[string]*law, len(samples))
	for key, abs := range samples {
		laws[key] = newLaw(abs)
	}
	return laws
}

// termsExact says whether m's Terms give every prefix of spans its exact
// PrefixVariance (all mechanisms but cascade, whose rounding they omit).
func termsExact(m mechanism.Mechanism, spans []span) bool {
	for _, s := range spans {
		v := m.PrefixVariance(s.hi)
		if math.Abs(hierarchy.RangeVariance(m, 0, s.hi)-v) > 1e-9*v {
			return false
		}
	}
	return true
}

// capped is a Monte-Carlo mean square multiplicative error mse, capped
// at the span's exact noise variance when the Terms are exact: the
// α-multiplicative error never exceeds |η|, so neither does its mean
// square exceed E[η²].
func capped(mse float64, exact bool, variance float64) float64 {
	if exact {
		return min(mse, variance)
	}
	return mse
}
