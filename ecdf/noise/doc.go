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
