// Package noise draws the secret noise of differentially private
// releases.
//
// Its exact integer samplers read only cryptographic randomness, never
// floating-point inverse-CDF transforms (Mironov 2012 shows how those
// leak through the low bits).
//
//   - [DiscreteLaplace]: P(x) ∝ exp(−|x|/t) on Z, the two-sided geometric
//     distribution, sampled exactly by Canonne, Kamath and Steinke 2020
//     ("The Discrete Gaussian for Differential Privacy", Algorithms 1–2):
//     Bernoulli(exp(−γ)) for rational γ from integer comparisons only. The
//     scale t arrives as a float64, which is an exact binary fraction, so
//     no rounding enters the distribution. Its variance is
//     2e^{−1/t}/(1−e^{−1/t})², within 1/(12t²) relative of the continuous
//     Laplace's 2t².
//   - [DiscreteGaussian]: P(x) ∝ exp(−x²/(2σ²)) on Z (CKS20 Algorithm 3).
//
// Calibration. A scale Δ/ε or a variance σ² computed by a calibration is
// a real number; [RoundUpScale] turns it into the least exactly sampled
// value at least as large (a float64 multiple of 2^−62), so the realised
// noise is never smaller than the calibration asks for and the realised
// ε never exceeds the claim. A huge ε thus gives the finest scale 2^−62,
// whose draws are 0 except with probability about 2e^{−2^62}.
//
// Randomness comes from a [Source]: crypto/rand for one-off draws, or a
// [Stream] derived from a secret release [Seed] with ChaCha20, so that every
// noise variable of a release is a function of the seed and a server
// stores only 32 bytes per release.
//
// # Fixed work
//
// The samplers are rejection loops: the words a draw reads, hence its
// time, grow with the value drawn. [SampleFixed] computes a fixed budget
// of stream words at once (WordBudget, whole ChaCha20 blocks, a function
// of the public scale only) and lets the sampler read them from memory,
// so a draw's keystream work is the same whatever its value; only a
// draw needing more reads on. The probability of that is bounded, not
// estimated (words.go, WordTailBound), from the rejection structure:
//
//   - uniformBelow(n) reads 1 + a geometric number of words, rejecting
//     with probability q = (2^64 mod n)/2^64 independently of its value:
//     PGF E[z^W] = (1 − q)z/(1 − qz).
//   - bernoulliExpNegOne reads J words, P(J ≥ j) = 1/j!, and is true iff
//     J is even; the loop of V (and the Gaussian's whole part) calls it
//     until it is false: PGF no/(1 − yes) of the two parts.
//   - Algorithm 1's counter reaches k with probability γ^{k−1}/(k−1)!,
//     reading the Bernoulli(γ) sampler and the counters on the way; a
//     smaller γ reads a prefix of the words of a larger one.
//   - Renewal: when rounds are independent and a round's words have PGF
//     at most m, restricted to its not ending the draw at most f < 1,
//     E[z^W] = S/(1 − F) ≤ (m − F)/(1 − F) ≤ (m − f)/(1 − f) (S + F ≤ m,
//     and the middle term grows with F as m ≥ 1).
//   - Lap_Z: a round ends the draw unless Algorithm 1 rejects U or Y = 0
//     draws a negative sign; m reads every part, f is bounded term by
//     term (U's moments summed exactly for num ≤ 2^12, by integrals
//     above).
//   - N_Z (CKS20 Algorithm 3, t = ⌊σ⌋ + 1 an integer): a round is one
//     Lap_Z(t) draw Y and its acceptance, which reads fresh words, so m
//     is the product of Lap_Z's bound and the acceptance's read to the
//     end (the loop of ⌊γ⌋ Bernoulli(e^−1) calls run to its first false,
//     the fraction's Bernoulli with γ = 1; uniformBelowBig's tries
//     succeed with probability ≥ 1/2 whatever the value). For f, Y's
//     words are those of Lap_Z's failed rounds (1/(1 − f_Lap)) and of
//     its last, split by that round's U and V: E[z^·; U = u, V = v] ≤
//     (1/t)·g·(the U-Bernoulli accepting given u)·yes^v·no·z, and |Y| =
//     tv + u. Given Y, the acceptance rejects either at the (j+1)-th
//     whole call after j true ones (yes^j·no, j < ⌊γ⌋) or in the
//     fraction's Bernoulli, which needs its first Bernoulli(γ − ⌊γ⌋)
//     true (probability γ − ⌊γ⌋ whatever the words of its tries) and
//     then reads a prefix of the words with γ = 1: at most
//     yes^⌊γ⌋·(γ − ⌊γ⌋)·Φ. f sums the product over v and over ranges
//     of u, the rejection term at its largest over the range.
//
// Chernoff's bound P(W > B) ≤ E[z^W]·z^−B, minimised over z, then gives
// the least B (a multiple of 8) with P(W > B) ≤ 2^−40 at every scale:
// 136–408 words for the discrete Laplace (the most at scales just above
// an integer fraction such as 1.5), 448–736 for the discrete Gaussian
// (TestWordBudgetBoundsTheTail). The bound is not tight — where it says
// 0.01 at most 0.05% of draws pass (TestWordTailBoundHolds) — so the
// budgets are larger than the work needs; a tighter bound would lower
// the cost, not the guarantee. Left out of f_Lap: the rounds Lap_Z
// rejects for ⌊X/den⌋ ≥ 2^63, which need V ≥ 2^11 − 1 true calls, a term
// of order yes^2047 < 2^−900 at the z used. Past the budget the draw is
// still exact
// (the sampler reads the same words in the same order, so values, the
// distribution and the pure-ε claims are unchanged); only its time then
// depends on the value, with probability at most 2^−40 per draw. What
// always varies with the value is the sampler's own arithmetic on the
// words it reads from memory (a few nanoseconds per word).
//
// # Stability
//
// The derivation seed → Stream(domain, index) → sampler → value is a
// stability contract: servers persist a release's seed and re-derive its
// noise from it after every restart, so the same seed must give the same
// noise in every version. Changing any step — the ChaCha20 keying and
// nonce layout of Stream, the order or number of words a sampler reads,
// the rejection rules of CKS20 Algorithms 1–3, or the exact scale a
// sampler is built with — is a versioned, breaking change: an old release
// re-derived with new noise would hand an analyst two independent draws
// of the same statistic to average. kat_test.go pins the contract with
// known-answer tests (SHA-256 of deterministic transcripts); a change
// that makes them fail must bump the stored-release version instead of
// updating the constants.
package noise
