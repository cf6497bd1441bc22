package noise

import (
	"math"
	"math/big"
	"sync"
)

// The words a draw reads: a bound derived from the rejection structure of
// the samplers (package doc, "Fixed work"). Every function here returns
// an upper bound; the probability generating functions (PGFs) E[z^W] of
// the words W read by the samplers' parts are evaluated at a real z > 1,
// +Inf where the bound diverges.

// wordTarget is the probability, at most, that a fixed-work draw needs
// more words than its budget.
const wordTarget = 0x1p-40

// seriesTerms is where the series over the counter k of CKS20
// Algorithm 1 are cut; the rest is bounded by seriesRest.
const seriesTerms = 64

// lemirePGF bounds the PGF of the words uniformBelow(n) reads: one, and
// one more after each rejection, an event of probability
// q = (2^64 mod n)/2^64 independent of the value returned, so
// E[z^W] = (1 − q)z/(1 − qz).
func lemirePGF(q, z float64) float64 {
	if q*z >= 1 {
		return math.Inf(1)
	}
	return (1 - q) * z / (1 - q*z)
}

// lemireReject is q of lemirePGF for uniformBelow(n).
func lemireReject(n uint64) float64 { return math.Ldexp(float64(-n%n), -64) }

// counterPGF bounds the PGF of uniformBelow(k) for the counters k ≥ 2 of
// Algorithm 1: q ≤ k/2^64 ≤ 2^−50 for k ≤ 2^14, and a counter passes 64
// only with probability below 1/64!, which seriesRest accounts for.
func counterPGF(z float64) float64 { return lemirePGF(0x1p-50, z) }

// seriesRest bounds Σ_{j ≥ seriesTerms} x^j/j! for 0 ≤ x ≤ 16: the
// first term, times Σ_i (x/seriesTerms)^i ≤ 2.
func seriesRest(x float64) float64 {
	lg, _ := math.Lgamma(seriesTerms + 1)
	return 2 * math.Exp(seriesTerms*math.Log(x)-lg)
}

// bernoulliOnePGF bounds, for bernoulliExpNegOne, E[z^W; true] and
// E[z^W; false]: it reads J words, one uniformBelow(k) for k = 2, 3, …
// while they return 0, so P(J ≥ j) = 1/j!, and returns true iff J is
// even; with c bounding each word's PGF, E[z^W; J = j] ≤ (1/j! −
// 1/(j+1)!)·c^j.
func bernoulliOnePGF(c float64) (yes, no float64) {
	if c > 16 {
		return math.Inf(1), math.Inf(1)
	}
	fact, pow := 1.0, 1.0 // j!, c^j
	for j := 1; j < seriesTerms; j++ {
		fact *= float64(j)
		pow *= c
		term := (1/fact - 1/(fact*float64(j+1))) * pow
		if j%2 == 0 {
			yes += term
		} else {
			no += term
		}
	}
	rest := seriesRest(c)
	return yes + rest, no + rest
}

// geometricLoopPGF bounds the PGF of the words of the loop "while
// bernoulliExpNegOne() {}" (the v of the discrete Laplace; the whole
// part of the discrete Gaussian's acceptance, which stops sooner):
// calls until the first false, E = no/(1 − yes).
func geometricLoopPGF(z float64) float64 {
	yes, no := bernoulliOnePGF(counterPGF(z))
	if yes >= 1 {
		return math.Inf(1)
	}
	return no / (1 - yes)
}

// fractionPGF bounds the PGF of the words of bernoulliExpNegFraction
// whose Bernoulli(γ) sampler reads words of PGF g and returns true with
// probability γ ≤ gammaMax: with c bounding a counter's PGF, the loop
// reads g at k = 1, goes on with probability γ; at each k ≥ 2 it reads c,
// and with probability 1/k reads g and goes on with probability γ. A
// draw with γ ≤ gammaMax reads a prefix of the words of one with
// gammaMax (couple the Bernoulli(γ) outcomes), so the sum with gammaMax
// bounds it.
func fractionPGF(g, c, gammaMax float64) float64 {
	if math.IsInf(g, 1) || math.IsInf(c, 1) {
		return math.Inf(1)
	}
	total := g * (1 - gammaMax) // stop at k = 1
	reach := g * gammaMax       // E[z^W; the loop reaches k], k = 2
	for k := 2.0; k < seriesTerms; k++ {
		total += reach * c * ((1 - 1/k) + g*(1-gammaMax)/k)
		reach *= c * g * gammaMax / k
	}
	if x := c * g; x <= 16 {
		return total + seriesRest(x)
	}
	return math.Inf(1)
}

// laplaceWords is the structure of Lap_Z(num/den). Each round (one pass
// of Sample's loop) reads uniformBelow(num) for U (PGF g), then
// bernoulliExpNegFraction(γ = U/num) whose Bernoulli is one
// uniformBelow(num) (fractionPGF), and, if that accepts, the loop of V
// (geometricLoopPGF) and the sign (one word); it ends the draw unless the
// Bernoulli rejects, or Y = 0 with a negative sign. The rounds are
// independent, so the words W of a draw have E[z^W] = S(z)/(1 − F(z)),
// S and F the PGF of one round's words restricted to its ending the draw
// or not: S ≤ roundPGF and F ≤ failPGF, and P(W > B) ≤ E[z^W]·z^−B
// (Chernoff) for every z with F(z) < 1.
type laplaceWords struct {
	num, den uint64
	// moments[k] bounds E[γ^{k−1}] and moments[k+seriesTerms] bounds
	// E[γ^{k−1}(1 − γ)], U uniform below num (failPGF).
	moments []float64
}

// exactMoments is the largest num whose moments are summed exactly.
const exactMoments = 1 << 12

// newLaplaceWords returns the structure of Lap_Z(num/den) with its
// moments: summed exactly over U for num ≤ exactMoments, else bounded by
// E[γ^{k−1}] ≤ 1/k (a left Riemann sum of an increasing function is
// below its integral) and E[γ^{k−1}(1 − γ)] ≤ 1/k − 1/(k+1) + 1/num (the
// sum of γ^k is at least its integral less 1/num).
func newLaplaceWords(num, den uint64) laplaceWords {
	l := laplaceWords{num: num, den: den, moments: make([]float64, 2*seriesTerms)}
	n := float64(num)
	if num > exactMoments {
		for k := 1; k < seriesTerms; k++ {
			l.moments[k] = 1 / float64(k)
			l.moments[k+seriesTerms] = 1/float64(k) - 1/float64(k+1) + 1/n
		}
		return l
	}
	for u := range num {
		gamma, p := float64(u)/n, 1/n // p = γ^{k−1}/num
		for k := 1; k < seriesTerms; k++ {
			l.moments[k] += p
			l.moments[k+seriesTerms] += p * (1 - gamma)
			p *= gamma
		}
	}
	for k := range l.moments {
		l.moments[k] *= 1 + 0x1p-40 // rounding
	}
	return l
}

// roundPGF bounds the PGF of one round's words: every part read.
func (l laplaceWords) roundPGF(z float64) float64 {
	g := lemirePGF(lemireReject(l.num), z)
	gammaMax := float64(l.num-1) / float64(l.num)
	return g * fractionPGF(g, counterPGF(z), gammaMax) * geometricLoopPGF(z) * z
}

// bernoulliPGF bounds E[z^Y; the Bernoulli rejects U] and E[z^Y; it
// accepts U], Y the words of U and of the Bernoulli. Its counter stops
// at k having read U (g), g·(cg)^{k−2} to reach k (with probability
// γ^{k−1}/(k−1)!), then c, and g with probability 1/k: it stops there
// with probability (1 − 1/k) + (1 − γ)/k, rejecting at an even k,
// accepting at an odd one, averaged over U by the moments of
// newLaplaceWords; at k = 1 the Bernoulli accepts with probability
// 1 − E[γ] = (num+1)/(2num). +Inf where the series diverge.
func (l laplaceWords) bernoulliPGF(z float64) (reject, accept float64) {
	g, c := lemirePGF(lemireReject(l.num), z), counterPGF(z)
	if c*g > 16 {
		return math.Inf(1), math.Inf(1)
	}
	n := float64(l.num)
	accept = g * (n + 1) / (2 * n)
	if l.num == 1 {
		accept = g // γ = 0
	}
	reach := g * c * g // the words to reach k = 2 and read its counter
	for k := 2.0; k < seriesTerms && l.num > 1; k++ {
		stop := reach / math.Gamma(k) * ((1-1/k)*l.moments[int(k)] + g/k*l.moments[int(k)+seriesTerms])
		if int(k)%2 == 0 {
			reject += stop
		} else {
			accept += stop
		}
		reach *= c * g
	}
	rest := g * seriesRest(c*g)
	return g * (reject + rest), g * (accept + rest)
}

// failPGF bounds E[z^Y; the round does not end the draw]: the
// Bernoulli rejects (bernoulliPGF), or after an acceptance the sign
// fails. It fails only if Y = 0: for num ≥ den only if V = 0 (the loop's
// first call false: PGF no of bernoulliOnePGF) and U < den, probability
// den/num, the Bernoulli's words then bounded by fractionPGF; for
// num < den only if V < ⌈den/num⌉. Then the sign word, false with
// probability 1/2.
func (l laplaceWords) failPGF(z float64) float64 {
	reject, accept := l.bernoulliPGF(z)
	if math.IsInf(accept, 1) {
		return math.Inf(1)
	}
	g, c := lemirePGF(lemireReject(l.num), z), counterPGF(z)
	n := float64(l.num)
	yes, no := bernoulliOnePGF(c)
	var zero float64
	if l.num >= l.den {
		zero = float64(l.den) / n * no * g * fractionPGF(g, c, (n-1)/n) / accept
	} else {
		m := math.Ceil(float64(l.den) / n)
		zero = no * (1 - math.Pow(yes, m)) / (1 - yes)
	}
	return reject + accept*zero*z/2
}

// drawPGF bounds E[z^W] of one draw, renewalPGF of roundPGF and
// failPGF.
func (l laplaceWords) drawPGF(z float64) float64 {
	return renewalPGF(l.roundPGF(z), l.failPGF(z))
}

// renewalPGF bounds E[z^W] for the words W of independent rounds until
// the first that ends the draw, given m ≥ S(z) + F(z) ≥ 1 and f ≥ F(z),
// S and F the PGFs of a round's words restricted to its ending the draw
// or not: E[z^W] = Σ_n F^n·S = S/(1 − F) ≤ (m − F)/(1 − F) (as
// S ≤ m − F), which increases with F (derivative (m − 1)/(1 − F)² ≥ 0),
// so is at most (m − f)/(1 − f). +Inf where f ≥ 1.
func renewalPGF(m, f float64) float64 {
	if f >= 1 || math.IsNaN(f) || math.IsNaN(m) {
		return math.Inf(1)
	}
	return (m - f) / (1 - f)
}

// zGrid is the z of the Chernoff bounds: 1 + 2^(i/8 − 12), i < 100.
func zGrid(fn func(z float64)) {
	for i := range 100 {
		fn(1 + math.Exp2(float64(i)/8-12))
	}
}

// chernoffWords returns the least B with E[z^X]·z^−B ≤ target for some
// z of the grid, logPGF(z) = log E[z^X]: P(X > B) ≤ target.
func chernoffWords(logPGF func(float64) float64, target float64) int {
	best := math.Inf(1)
	zGrid(func(z float64) {
		best = min(best, math.Ceil((logPGF(z)-math.Log(target))/math.Log(z)))
	})
	return int(min(best, 1<<20))
}

// chernoffTail is min over the grid of E[z^X]·z^−b, at most 1.
func chernoffTail(b int, logPGF func(float64) float64) float64 {
	best := 1.0
	zGrid(func(z float64) {
		best = min(best, math.Exp(logPGF(z)-float64(b)*math.Log(z)))
	})
	return best
}

// blockWords rounds words up to whole ChaCha20 blocks of 8 words.
func blockWords(words int) int { return (words + 7) / 8 * 8 }

func (l laplaceWords) logPGF(z float64) float64 { return math.Log(l.drawPGF(z)) }

// budget is the least multiple of 8 words B with bound P(W > B) ≤ target.
func (l laplaceWords) budget(target float64) int {
	return blockWords(chernoffWords(l.logPGF, target))
}

// tail bounds P(W > b).
func (l laplaceWords) tail(b int) float64 { return chernoffTail(b, l.logPGF) }

// gaussianWords is the structure of N_Z(0, σ²), σ² = num/den: each round
// draws Y ~ Lap_Z(t), t = ⌊σ⌋ + 1 an integer (so Y = ±(U + t·V), U
// uniform below t), then accepts it with probability exp(−γ), γ =
// (|Y| − σ²/t)²/(2σ²): w = ⌊γ⌋ calls of bernoulliExpNegOne, stopping at
// the first false (a rejection), then bernoulliExpNegFraction of γ − w
// whose Bernoulli reads uniformBelowBig(D), D = 2·num·den·t²: L words per
// try, a try accepted with probability s = D/2^bitlen(D) ≥ 1/2 whatever
// the value drawn, PGF s·z^L/(1 − (1 − s)z^L). The rounds are
// independent: renewalPGF of roundPGF and failPGF bounds the draw's PGF.
type gaussianWords struct {
	sigma2  float64
	lap     laplaceWords
	t       float64
	tryLen  int     // L
	tryProb float64 // s
}

func newGaussianWords(g *DiscreteGaussian) gaussianWords {
	bitLen := g.gammaDen.BitLen()
	top := new(big.Float).SetInt(g.gammaDen)
	top.SetMantExp(top, -bitLen) // D/2^bitlen ∈ [1/2, 1)
	s, _ := top.Float64()
	return gaussianWords{
		sigma2:  g.sigma2,
		lap:     newLaplaceWords(g.laplace.num, g.laplace.den),
		t:       g.laplace.scale,
		tryLen:  ((bitLen+7)/8 + 7) / 8,
		tryProb: max(0.5, s*(1-0x1p-50)),
	}
}

// tryPGF bounds the PGF of one uniformBelowBig(D).
func (g gaussianWords) tryPGF(z float64) float64 {
	x := math.Pow(z, float64(g.tryLen))
	if (1-g.tryProb)*x >= 1 {
		return math.Inf(1)
	}
	return g.tryProb * x / (1 - (1-g.tryProb)*x)
}

// acceptPGF bounds the PGF of the acceptance's words whatever Y: the
// loop's words are a prefix of those of the loop run to its first false
// (geometricLoopPGF), and the fraction's those of a Bernoulli with γ = 1
// (fractionPGF).
func (g gaussianWords) acceptPGF(z float64) float64 {
	return geometricLoopPGF(z) * g.fractionPGF(z)
}

// fractionPGF is Φ = fractionPGF(try, c, 1), the words of the
// acceptance's bernoulliExpNegFraction with γ = 1.
func (g gaussianWords) fractionPGF(z float64) float64 {
	return fractionPGF(g.tryPGF(z), counterPGF(z), 1)
}

// roundPGF bounds the PGF of a round's words: Y's and the acceptance's,
// which reads fresh words, E[z^A | Y] ≤ acceptPGF whatever Y.
func (g gaussianWords) roundPGF(z float64) float64 {
	return g.lap.drawPGF(z) * g.acceptPGF(z)
}

// drawPGF bounds E[z^W] of one draw.
func (g gaussianWords) drawPGF(z float64) float64 {
	return renewalPGF(g.roundPGF(z), g.failPGF(z))
}

// failPGF bounds F(z) = E[z^X; the round rejects], X its words, as a sum
// over the U and V of Y's last Laplace round. Y's words are those of the
// Laplace rounds that fail (E[z^·] = 1/(1 − F_L) summed over their
// number, F_L ≤ laplaceWords.failPGF) and of the last: U (words of PGF
// g, independent of U's value) and its Bernoulli, accepting
// (acceptGiven), V true calls of bernoulliExpNegOne and a false one
// (yes^V·no, bernoulliOnePGF), and the sign word (z; the sign's
// acceptance bounded by 1). Given Y the acceptance reads fresh words:
// E[z^A; reject | Y] ≤ rejectPGF(γ(Y)). With U's values cut into at most
// uBins ranges j of n_j values, U/t ∈ [a_j, b_j], and |Y| = tV + U:
//
//	F(z) ≤ g·no·z/(1 − F_L) · Σ_V yes^V · Σ_j (n_j/t)·acceptGiven(a_j, b_j)
//	       · max{rejectPGF(γ(y)) : y ∈ [tV + t·a_j, tV + t·b_j]}
//
// (maxRejectPGF), the sum over V cut once a term falls below 2^−60 of
// the sum, the rest bounded by yes^V/(1 − yes)·Σ_j (n_j/t)·acceptGiven
// ·max(Φ, no/(1 − yes)), Φ ≥ rejectPGF everywhere.
func (g gaussianWords) failPGF(z float64) float64 {
	fl := g.lap.failPGF(z)
	u := lemirePGF(lemireReject(g.lap.num), z)
	c := counterPGF(z)
	yes, no := bernoulliOnePGF(c)
	phi := g.fractionPGF(z)
	if fl >= 1 || yes >= 1 || math.IsInf(u+c+phi, 1) || math.IsNaN(fl+phi) {
		return math.Inf(1)
	}
	type bin struct{ lo, hi, weight float64 } // U ∈ [lo, hi]; weight n_j/t·acceptGiven
	bins := make([]bin, 0, uBins)
	nb := min(g.t, uBins)
	for j := 0.0; j < nb; j++ {
		lo, hi := math.Floor(j*g.t/nb), math.Floor((j+1)*g.t/nb)-1
		bins = append(bins, bin{lo, hi, (hi - lo + 1) / g.t * acceptGiven(u, c, lo/g.t, hi/g.t)})
	}
	sum, pow, largest := 0.0, 1.0, 0.0
	for _, b := range bins {
		largest += b.weight
	}
	for v := 0.0; pow*largest > 0x1p-60*sum; v++ {
		for _, b := range bins {
			lo, hi := v*g.t+b.lo, v*g.t+b.hi
			sum += pow * b.weight * maxRejectPGF(g.gamma(lo), g.gamma(hi), g.gamma(max(lo, min(hi, g.sigma2/g.t))), yes, no, phi)
		}
		pow *= yes
	}
	sum += pow / (1 - yes) * max(phi, no/(1-yes)) * largest
	return u * no * z / (1 - fl) * sum
}

// uBins is the most ranges failPGF cuts U's values into.
const uBins = 32

// acceptGiven bounds E[z^Y; the Bernoulli accepts | U], Y its words,
// for U/t = γ ∈ [a, b], as bernoulliPGF does for the average over U,
// each term bounded at its end of the range: the first Bernoulli(γ)
// false (probability 1 − γ ≤ 1 − a, words g), or the counter reaching an
// odd k (probability γ^{k−1}/(k−1)! ≤ b^{k−1}/(k−1)!) and stopping there.
func acceptGiven(g, c, a, b float64) float64 {
	accept := g * (1 - a)
	reach := g * c * g
	for k := 2.0; k < seriesTerms; k++ {
		if int(k)%2 == 1 {
			accept += reach / math.Gamma(k) * math.Pow(b, k-1) * ((1 - 1/k) + g/k*(1-a))
		}
		reach *= c * g
	}
	return accept + g*seriesRest(c*g)
}

// gamma is γ(y) = (y − σ²/t)²/(2σ²).
func (g gaussianWords) gamma(y float64) float64 {
	d := y - g.sigma2/g.t
	return d * d / (2 * g.sigma2)
}

// rejectPGF bounds E[z^A; reject] for the acceptance of γ = w + f
// (w = ⌊γ⌋, f its fraction): the loop rejects at its (j+1)-th call,
// j < w, after j true calls (yes^j·no); or all w calls are true and the
// fraction's Bernoulli rejects, which needs its counter to reach k = 2:
// the try at k = 1 returns a value below the fraction, probability f
// whatever the number of tries (the words' PGF try), and the words from
// k = 2 on are a prefix of those with γ = 1 (Φ/try), so that part is at
// most yes^w·f·Φ. In all rejectPGF = no·(1 − yes^w)/(1 − yes) +
// yes^w·f·Φ.
func rejectPGF(w, f, yes, no, phi float64) float64 {
	pw := math.Pow(yes, w)
	return no*(1-pw)/(1-yes) + pw*f*phi
}

// maxRejectPGF bounds rejectPGF over γ ∈ [lo', hi'] ⊇ [min, max] of
// γ over a range of |Y| (γ is convex in |Y|: its largest value at an end
// lo or hi, its least at mid, the point of the range nearest σ²/t),
// widened by 2^−40 relatively for rounding (γ's float64 error is below
// 2^−50 relatively where γ ≥ 1 and V < 2^9, far past where the sum over
// V is cut). On [w, w + 1) rejectPGF
// increases with f; at f = 1 it is monotone in w (geo + yes^w·(Φ −
// geo), geo = no/(1 − yes)); so the largest is rejectPGF at hi' if lo'
// and hi' share w, else at f = 1 and w = ⌊lo'⌋ or ⌊hi'⌋.
func maxRejectPGF(lo, hi, mid, yes, no, phi float64) float64 {
	top := max(lo, hi) * (1 + 0x1p-40)
	bottom := mid * (1 - 0x1p-40)
	w1, w2 := math.Floor(bottom), math.Floor(top)
	if w1 == w2 {
		return rejectPGF(w2, top-w2, yes, no, phi)
	}
	return max(rejectPGF(w1, 1, yes, no, phi), rejectPGF(w2, 1, yes, no, phi))
}

func (g gaussianWords) logPGF(z float64) float64 { return math.Log(g.drawPGF(z)) }

// budget is the least multiple of 8 words B with bound P(W > B) ≤ target.
func (g gaussianWords) budget(target float64) int {
	return blockWords(chernoffWords(g.logPGF, target))
}

// tail bounds P(W > b).
func (g gaussianWords) tail(b int) float64 { return chernoffTail(b, g.logPGF) }

// wordCache holds a sampler's budget, computed at its first use.
type wordCache struct {
	once   sync.Once
	budget int
}

// budgets holds the budgets computed in this process, by scale
// (budgetKey): mechanisms such as counting-on-trees build new samplers
// of the same scales for every release.
var budgets sync.Map

// budgetKey identifies a sampler's law: its kind and exact scale.
type budgetKey struct {
	gaussian bool
	scale    float64
}

// get returns the budget of the law key, computing it with fn once per
// sampler and per process.
func (c *wordCache) get(key budgetKey, fn func() int) int {
	c.once.Do(func() {
		if b, ok := budgets.Load(key); ok {
			c.budget = b.(int)
			return
		}
		c.budget = fn()
		budgets.Store(key, c.budget)
	})
	return c.budget
}

// WordBudget returns the number of stream words a fixed-work draw of d
// computes (SampleFixed): the least multiple of 8 whose derived bound
// on the probability that a draw needs more (WordTailBound) is at most
// 2^−40.
func (d *DiscreteLaplace) WordBudget() int {
	return d.words.get(budgetKey{false, d.scale}, func() int { return newLaplaceWords(d.num, d.den).budget(wordTarget) })
}

// WordTailBound returns an upper bound, derived from the sampler's
// rejection structure (words.go), on the probability that a draw of d
// reads more than words words of its Source.
func (d *DiscreteLaplace) WordTailBound(words int) float64 {
	return newLaplaceWords(d.num, d.den).tail(words)
}

// WordBudget returns the number of stream words a fixed-work draw of g
// computes (SampleFixed), as for the discrete Laplace.
func (g *DiscreteGaussian) WordBudget() int {
	return g.words.get(budgetKey{true, g.sigma2}, func() int { return newGaussianWords(g).budget(wordTarget) })
}

// WordTailBound returns an upper bound, derived from the sampler's
// rejection structure (words.go), on the probability that a draw of g
// reads more than words words of its Source.
func (g *DiscreteGaussian) WordTailBound(words int) float64 {
	return newGaussianWords(g).tail(words)
}
