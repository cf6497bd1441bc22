// Package noise draws the secret noise of differentially private releases:
// exact integer samplers (discrete Laplace, discrete Gaussian) that read
// only cryptographic randomness, never floating-point inverse-CDF
// transforms (Mironov 2012 shows how those leak through the low bits).
//
// Randomness comes from a Source: crypto/rand for one-off draws, or a
// Stream derived from a secret release Seed with ChaCha20, so that every
// noise variable of a release can be regenerated on demand and a server
// stores only 32 bytes per release.
package noise
