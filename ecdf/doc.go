// Package ecdf computes differentially private empirical CDFs and their
// inverse.
//
// It follows Barczewski, Mawass and Ramon, "Differentially Private
// Empirical Cumulative Distribution Functions" (dp-ecdf in this
// repository's papers).
//
// # Grid
//
// A public, data-independent grid τ_1 < … < τ_N over a domain [min, max]
// (dp-ecdf §3.1) fixes where the ECDF is evaluated: evenly spaced,
// τ_i = min + i·(max−min)/N ([NewLinearGrid]), or evenly spaced in log when
// relative error matters ([NewGrid] with [Log]). τ_N = max exactly. An instance x falls in bin
//
//	bin(x) = min{i : x ≤ τ_i},
//
// so that the number of instances in bins 1..i is |{x : x ≤ τ_i}|. Values
// outside [min, max], NaN and ±Inf are errors; clamping to the end bins is
// explicit (Grid.BinAll). The domain must not be derived from the
// data: min and max would leak it.
//
// # ECDF and its private release
//
// With h_i instances in bin i and prefix counts c_i = h_1 + … + h_i, the
// ECDF at the thresholds is F(τ_i) = c_i/n (dp-ecdf Definition 3). It is a
// U-statistic of order 1 (dp-ecdf Eq. 1) with kernel 1[φ(x) ≤ τ_i]
// (Eq. 4), so any secure aggregation of sums can compute it.
//
// A mechanism (package mechanism) adds to each prefix count a
// data-independent integer noise η(i), linear in secret node noises: for
// the tree mechanism of dp-ecdf Eq. 2, η(i) = Σ_{l=0..L} η_{⌈i/2^l⌉,l}
// with η_{j,l} ~ Lap_Z(L/ε) and L = ⌈log2 N⌉, which makes all N values
// ε-DP under replace-one (Theorem 3.1 proves it for Lap((L+1)/ε); the
// exact sensitivity is L, package mechanism). The released quantity is
//
//	F̂(τ_i) = (c_i + η(i)) / n,
//
// normalised by the public number of instances n under the replace-one
// relation of dp-ecdf §2, and by the noisy total c_N + η(N) under
// add/remove, where n is private (raised to 1 when noise drives it
// below; [Normaliser], which every output embeds to say which n it is). It is not clipped to [0, 1] and need not
// be monotone. The noises are drawn once per release from a secret seed,
// so F̂ may be evaluated any number of times, at any thresholds, for the
// budget of one release (Private).
//
// # Smoothing and the inverse ECDF
//
// Post-processing costs no budget: smoothing (dp-ecdf §3.2, Eq. 3; package
// smooth) projects F̂ on a non-decreasing curve F́ in [0, 1], and the
// inverse ECDF is found by binary search (dp-ecdf Algorithm 1,
// Inv-Ecdf-DP): keep an interval (a, b] with F́(a) < p ≤ F́(b), halve it
// until it is one bin (the precision ψ of the grid) wide, ⌈log2 N⌉
// evaluations in all ([QuantileIndex], [Quantile]). On a monotone curve this
// gives the smallest τ_i with F́(τ_i) ≥ p; on raw, noisy F̂ it still ends at
// a crossing. Quantile returns the right end τ_i of the final interval
// rather than Algorithm 1's midpoint: τ_i is where the curve was
// evaluated, and it is the exact quantile when the data lie on the grid.
package ecdf
