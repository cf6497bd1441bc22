// Package smooth turns a private ECDF F̂ (raw: possibly decreasing and
// outside [0, 1]) into a non-decreasing curve F́ in [0, 1] — dp-ecdf §3.2,
// Eq. 3. Smoothing is post-processing of a released curve: it costs no
// privacy budget, and F́ has the ε (δ) and neighbouring relation of the
// release it came from.
//
// # Eq. 3
//
// With the tree mechanism of Eq. 2, F̂(τ_i) = F(τ_i) + (1/n)·Σ_l η_{⌈i/2^l⌉,l},
// Eq. 3 chooses one correction ν per noise node:
//
//	minimise   Σ_nodes |ν_{j,l}|^p
//	subject to F́(τ_i) = F̂(τ_i) + Σ_l ν_{⌈i/2^l⌉,l}   (i ∈ B)
//	           F́(τ_min B) ≥ 0,  F́(τ_max B) ≤ 1,  F́ non-decreasing on B.
//
// Here B = [N]. Writing Z for the N × nodes prefix–node pattern of any
// mechanism (mechanism.Terms: coefficients 1 for the tree, ±1 for k-ary,
// real for cascade), the constraint is F́ = F̂ + Zν ∈ K with
//
//	K = {g : 0 ≤ g_1 ≤ g_2 ≤ … ≤ g_N ≤ 1},
//
// a closed convex set that contains the true ECDF F.
//
// # Pointwise form (the authors' code): "l2" (PointwiseL2), "l1"
//
// With Z replaced by the identity (one correction per point), Eq. 3 is
// min Σ|g_i − F̂_i|^p over g ∈ K: bounded isotonic regression.
//
// p = 2. PointwiseL2 runs pool-adjacent-violators, O(N), giving the
// unbounded isotonic fit z* = P_M F̂ (M the monotone cone), then clips it
// to [0, 1]. The clip c(z*) is exactly P_K F̂. Proof: for any w ∈ K,
//
//	⟨F̂ − c(z*), w − c(z*)⟩ = ⟨F̂ − z*, w − c(z*)⟩ + ⟨z* − c(z*), w − c(z*)⟩.
//
// The second term is ≤ 0 coordinate by coordinate (where z*_i > 1,
// c = 1 ≥ w_i; where z*_i < 0, c = 0 ≤ w_i; elsewhere it is 0). In the
// first, F̂ − z* sums to zero on every PAVA block and c(z*) is constant on
// blocks, so ⟨F̂ − z*, c(z*)⟩ = 0, while ⟨F̂ − z*, w⟩ ≤ 0 for every w ∈ M
// because F̂ − z* lies in the polar cone of M. Hence the variational
// inequality of the projection onto K holds at c(z*). As P_K is a
// Euclidean projection onto a convex set containing F, it is
// non-expansive: ‖F − F́‖₂ ≤ ‖F − F̂‖₂ for every release (tested).
//
// p = 1. The "l1" method is the exact priority-queue dynamic program for L1
// isotonic regression (the "slope trick"; see Rote, Isotonic regression by
// dynamic programming, SOSA 2019), O(N log N): the prefix cost as a
// function of the last value is convex piecewise linear, a max-heap holds
// its breakpoints and its maximum is an optimal last value; the solution is
// read back from right to left. Clipping is exact by the argument above
// with a subgradient of Σ|g_i − F̂_i| in place of F̂ − z*. Tests compare it
// with an exact dynamic program over candidate values (the data and the
// bounds), including inputs with ties.
//
// # Tree form: "tree-l2" (p = 2)
//
// F̂ = F + Zη/n with i.i.d. node noise η of variance σ² (in counts), so F̂
// has covariance Σ = (σ²/n²)·ZZᵀ. For a change d = F́ − F̂ the least-norm
// node correction is ν = Zᵀ(ZZᵀ)⁻¹d with ‖ν‖² = dᵀ(ZZᵀ)⁻¹d, so
//
//	F́ = argmin_{g ∈ K} (g − F̂)ᵀ Σ⁻¹ (g − F̂),
//
// the generalised-least-squares (Mahalanobis) projection of F̂ onto K.
// Scaling: F̂ is normalised by n and ν is reported in the same ECDF units
// (n·ν in counts); multiplying Σ by a constant does not move the
// minimiser, so neither n nor σ² is needed to compute F́. It is
// non-expansive in the Σ⁻¹ metric (tested), not in the Euclidean one, so
// unlike PointwiseL2 it can increase ‖F − F́‖₂ on some releases; in
// exchange it removes noise along the directions in which the mechanism
// puts most of it (a whole subtree shifted by one node).
//
// It solves min ½‖ν‖² s.t. Aν ≥ b, with A = DZ, D the (N+1) × N
// difference operator of K and b = c − DF̂, on its dual
// max_{λ ≥ 0} λᵀb − ½‖Aᵀλ‖² by accelerated projected gradient
// (diagonally preconditioned by W = |A||A|ᵀ1 ≽ AAᵀ) with adaptive restart;
// ν = Aᵀλ. An iteration costs one product with A and
// one with Aᵀ, O(nnz A) = O(N log N) for the tree, k-ary and cascade
// patterns. It stops when the KKT residual — the primal violation and the
// duality gap λᵀ(Aν − b); stationarity and λ ≥ 0 hold by construction —
// is below a relative tolerance (default 1e-9: violation
// relative to that of F̂, gap relative to ½‖ν‖²), and reports the
// iterations and residuals. A final PointwiseL2 pass makes the
// curve exactly feasible (it moves it by at most N times the violation).
// Tests check the solution against active-set enumeration for N ≤ 8 and an
// exact KKT certificate for N = 16, 32, for tree, k-ary and cascade.
//
// The paper solves Eq. 3 with the cvxopt LP and QP solvers (§6.6, Fig. 7);
// here l2 is O(N), l1 O(N log N), and tree-l2 O(N log N) per iteration.
// The effect of smoothing on the error is measured by `fedecdf bench
// accuracy` and `fedecdf experiment` (dp-ecdf §6.3, Figs. 2 and 3).
package smooth
