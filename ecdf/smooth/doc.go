// Package smooth turns a private ECDF F̂ (raw, possibly decreasing and
// outside [0, 1]) into a non-decreasing curve F́ in [0, 1] — dp-ecdf §3.2,
// Eq. 3. Smoothing is post-processing and costs no privacy budget.
//
// Eq. 3 minimises Σ|ν|^p over corrections ν subject to F́ non-decreasing,
// F́(τ_1) ≥ 0 and F́(τ_N) ≤ 1. Two readings of ν are offered:
//
//   - pointwise (the authors' code): F́ = F̂ + ν, one correction per
//     threshold. For p = 2 this is the bounded isotonic regression, solved
//     exactly in O(N) by pool-adjacent-violators followed by clipping to
//     [0, 1] (PointwiseL2). Since the true ECDF lies in the constraint set
//     and a Euclidean projection onto a closed convex set is non-expansive,
//     ‖F − F́‖₂ ≤ ‖F − F̂‖₂ always. For p = 1 the exact L1 isotonic
//     regression is found in O(N log N) with a max-heap (PointwiseL1).
//   - tree (Eq. 3 as written): F́ = F̂ + Zν with ν one correction per noise
//     node of the mechanism, Z its prefix–node pattern (mechanism.Terms), and
//     ‖ν‖₂ minimised (TreeL2). The minimal-norm ν for a given curve change z
//     has ‖ν‖² = zᵀ(ZZᵀ)⁻¹z, so this is a generalised least-squares
//     projection of F̂ onto the same convex set in the metric of the noise
//     covariance ZZᵀ. It is not a Euclidean projection, so it can increase
//     the L2 error; dp-ecdf Fig. 2 reports it helps for ε ≳ 0.2 at λ = 3.
//     It is solved on its dual by accelerated projected gradient to a stated
//     tolerance, O(N log N) work per iteration.
//
// ErrorRatio measures ‖F − F́‖²/‖F − F̂‖² for each method on the paper's
// X_pois(λ) data, the quantity of dp-ecdf Figs. 2 and 3.
package smooth
