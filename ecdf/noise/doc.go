// Package noise draws the secret noise of differentially private releases:
// exact integer samplers that read only cryptographic randomness, never
// floating-point inverse-CDF transforms (Mironov 2012 shows how those leak
// through the low bits).
//
//   - DiscreteLaplace: P(x) ∝ exp(−|x|/t) on Z, the two-sided geometric
//     distribution, sampled exactly by Canonne, Kamath and Steinke 2020
//     ("The Discrete Gaussian for Differential Privacy", Algorithms 1–2):
//     Bernoulli(exp(−γ)) for rational γ from integer comparisons only. The
//     scale t = Δ/ε arrives as a float64, which is an exact binary fraction,
//     so no rounding enters the distribution. Its variance is
//     2e^{−1/t}/(1−e^{−1/t})², within 1/(12t²) relative of the continuous
//     Laplace's 2t².
//   - DiscreteGaussian: P(x) ∝ exp(−x²/(2σ²)) on Z (CKS20 Algorithm 3).
//
// Randomness comes from a Source: crypto/rand for one-off draws, or a
// Stream derived from a secret release Seed with ChaCha20, so that every
// noise variable of a release can be regenerated on demand and a server
// stores only 32 bytes per release.
package noise
