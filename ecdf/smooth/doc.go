// Package smooth turns a raw private ECDF into a non-decreasing curve
// in [0, 1].
//
// The raw F̂ may decrease and leave [0, 1]; the smoothed F́ is that of
// dp-ecdf §3.2, Eq. 3. Smoothing is post-processing of a released
// curve: it costs no privacy budget, and F́ has the ε (δ) and
// neighbouring relation of the release it came from.
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
// p = 2. [PointwiseL2] runs pool-adjacent-violators, O(N), giving the
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
// Written with the (N+1) × N difference operator D of K (row 0: g_1 ≥ 0;
// row r: g_{r+1} − g_r ≥ 0; row N: −g_N ≥ −1), bounds c, A = DZ and
// b = c − DF̂, it is min ½‖ν‖² s.t. Aν ≥ b, with dual
// max_{λ ≥ 0} λᵀb − ½‖Aᵀλ‖² and ν = Aᵀλ.
//
// There is nothing to gain before the constraint: the release is N noisy
// prefixes with a nonsingular covariance, so the unconstrained GLS
// estimate of F is F̂ itself. (The two-pass consistency estimator of Hay,
// Rastogi, Miklau and Suciu, VLDB 2010, §4, is the GLS estimate when the
// noisy counts of all 2N − 1 tree nodes are released — more observations
// than unknowns; here node noises are never released separately.) All of
// the smoothing comes from K.
//
// Path-sum trees: exact. For tree, kary and gaussian-tree, prefix i's
// noise is y at one node o(i) of a tree whose values are path sums,
// y_v = y_parent(v) + c_v·η_v below a ground y = 0 (the k-ary walk of
// prefix t extends that of the prefix before its last step), and the
// prefixes of every subtree form an interval. newPathTree recognises
// this from mechanism.Terms, prefix by prefix (the nodes a prefix shares
// with earlier ones must be a path from the ground, its new nodes hang
// below it; one coefficient per node; tests check that the tree's
// path-sum covariance equals ZZᵀ). Since ν ↦ y is a
// bijection with ν_v = (y_v − y_parent(v))/c_v, the least ‖ν‖² giving
// F̂ + Zν = g is the least tree energy
//
//	E(y) = ½ Σ_v w_v (y_v − y_parent(v))²,  w_v = 1/c_v²,  y_o(i) = g_i − F̂_i,
//
// so tree-l2 is min E subject to F̂ + y_o ∈ K, a resistor network (edge
// conductances w_v) whose terminals are held at the corrections.
//
// Active sets. Making a set S of rows tight means g constant on blocks of
// prefixes (free values z_b), the first block at 0 and the last at 1 when
// their bound rows are in S. min E under those equalities is an SPD
// quadratic in the unobserved node values and the z_b, solved exactly by
// Gaussian elimination children first (glsSolver): as subtrees and blocks
// are both intervals, what a subtree passes to its parent is a quadratic
// in at most three variables — its own value and the blocks at its two
// ends — so one solve is O(N) small dense steps. A subtree inside one
// block is, seen from its parent, ½·s_v·(y_parent − z + m_v)² with the
// series–parallel conductance s_v and mean offset m_v of its terminals,
// computed once per curve. ∂E/∂g_i is the net flow at o(i), and
// stationarity ∂E/∂g = Dᵀλ gives the multipliers by running sums within
// blocks (λ = 0 on the rows between blocks).
//
// The primal–dual active-set method (Hintermüller, Ito and Kunisch, SIAM
// J. Optim. 13(3), 2002) iterates S ← {r ∈ S: λ_r ≥ 0} ∪ {r ∉ S:
// (Aν − b)_r < 0}, starting from the rows tight at PointwiseL2(F̂). When S
// repeats, every KKT condition holds: tight rows on S and λ = 0 off it by
// construction, λ ≥ 0 on S and feasibility off S by the test. The problem
// is strictly convex in g, so that curve is the optimum — exact up to
// rounding (the sign tests allow λ ≥ −10⁻¹⁰·max|λ| and violations up to
// 10⁻¹²·(1 + max|F̂|)). The method is Newton's on the dual, whose Hessian
// H = AAᵀ = DΣDᵀ is here a weighted graph Laplacian: H1 = 0 since the
// rows of D sum to zero, and H_rs ≤ 0 for r < s. For the latter write
// f(i, j) = Cov(y_o(i), y_o(j)), the distance from the ground to the two
// nodes' lowest common ancestor; subtrees are intervals, so for i < j < k
// the ancestor of i and k is the higher of those of (i, j) and (j, k):
// f(i, k) = min(f(i, j), f(j, k)). Row r is g_{r+1} − g_r with g_0 and
// g_{N+1} constants (prefixes 0 and N+1 at the ground, f = 0), so with
// a = r < b = r+1 ≤ c = s < d = s+1, H_rs = f(b,d) − f(a,d) −
// f(b,c) + f(a,c); putting x = f(a,b), y = f(b,c), z = f(c,d) (y ≥ x, z
// when b = c) it is min(y,z) + min(x,y) − min(x,y,z) − y ≤ 0 in each of
// the three cases of the smallest. Proper principal submatrices of H are
// then nonsingular M-matrices, the setting in which HIK 2002 show the
// method's global, monotone convergence (S is never all rows — g ≡ 0 and
// g ≡ 1 at once — the top row being freed if it would be); we have not
// proved that their argument covers the singular H, and on releases the
// set grows monotonically after the first iteration, as it predicts
// (iteration counts in EXPERIMENTS.md). After maxActiveSetIterations
// treeL2 falls back to the gradient method below. Between iterations
// only the nodes above a changed row (or a block becoming or ceasing to
// be pinned) are recomputed: a node's message depends on nothing else.
//
// Other patterns: gradient. Cascade's prefix coefficients (tents over the
// dyadic nodes) are not path sums, and its tree-l2 runs accelerated
// projected gradient ascent on the dual, diagonally preconditioned by
// W = |A||A|ᵀ1 ≽ AAᵀ, with adaptive restart; ν = Aᵀλ. An iteration costs
// one product with A and one with Aᵀ, O(nnz A) = O(N log N). It stops
// when the KKT residual — the primal violation and the duality gap
// λᵀ(Aν − b); stationarity and λ ≥ 0 hold by construction — is below a
// relative tolerance (1e-9: violation relative to that of F̂, gap
// relative to ½‖ν‖²); a final PointwiseL2 pass makes the curve exactly
// feasible (it moves it by at most N times the violation).
//
// Tests check both methods against active-set enumeration for N ≤ 8 and
// a dense KKT certificate for N = 16, 32 (objective within 1e−9), the
// exact method against the gradient one at a 1e−12 tolerance for N up to
// 1024, and the incremental solves against fresh ones.
//
// # A public end: ApplyTop
//
// Under replace-one n is public, and every counted record lies in a bin
// of the grid, so F(τ_N) = 1 is public too. [ApplyTop] adds g_N = 1 to
// K. For l1 and l2 the minimiser is then the bounded fit of F̂_1..F̂_{N−1}
// (g_{N−1} ≤ g_N = 1 is the bound already there) followed by 1, exactly;
// tree-l2 raises its last point to 1 without refitting the others.
//
// The paper solves Eq. 3 with the cvxopt LP and QP solvers (§6.6, Fig. 7);
// here l2 is O(N), l1 O(N log N), and tree-l2 on path-sum trees O(N) per
// active-set iteration (O(N log N) per gradient iteration for cascade).
// The effect of smoothing on the error is measured by `fedecdf bench
// accuracy` and `fedecdf experiment` (dp-ecdf §6.3, Figs. 2 and 3).
package smooth
