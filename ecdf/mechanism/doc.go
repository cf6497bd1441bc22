// Package mechanism holds the noise mechanisms for prefix sums over a grid
// of N bins: data-independent, linearly structured noise whose per-prefix
// variance is known exactly.
//
// Every statistic of fedecdf is a vector of prefix counts
//
//	released(i) = Σ_parties payload(x)·1[bin(x) ≤ i] + Σ_{p∈P(i)} s_p·η_p
//
// where P(i) and the coefficients s_p are the mechanism's pattern (Terms)
// and the η_p are drawn once per release, lazily, from a secret seed
// (package noise) and reused for every later query of the same release, so
// re-asking a prefix or binary-searching the inverse ECDF costs no budget.
//
// # Mechanisms
//
//	name           source                              noise per node                privacy
//	tree           dp-ecdf Eq. 2, Thm 3.1              discrete Laplace, Δ/ε         ε-DP
//	kary           count-on-your-elders Alg. 2, App. C discrete Laplace, Δ/ε         ε-DP
//	gaussian-tree  binary tree (elders Alg. 1, k = 2)  discrete Gaussian             (ε,δ)-DP
//	cascade        cascade-sampling Alg. 1, Thm 3.8    correlated discrete Gaussian  ρ-zCDP ⇒ (ε,δ)-DP
//	auto           least exact mean prefix variance among the above (pure ε-DP ones when δ = 0)
//
// Sensitivities are exact for each neighbouring relation (Relation):
//
//   - tree: Δ = L+1 under replace-one (Thm 3.1), ⌈(L+1)/2⌉ under
//     add/remove (Lemma 1: an added instance changes a suffix of prefixes).
//   - kary: Δ = h under add/remove (every input lies in h non-root nodes);
//     under replace-one Δ = max_{a≠b} |U(a) △ U(b)|, U(x) the used nodes
//     containing bin x, computed exactly for the given N (≤ 2h, 2h−1 for
//     k = 3).
//   - cascade: the worst Mahalanobis norm ΔᵀC⁻¹Δ is 1 + L/3 under
//     add/remove (Corollary B.3) and 2(L+1)/3 under replace-one (the root
//     total does not move, the lowest common ancestor moves by 2).
//
// All of these are checked by enumeration tests that construct, for every
// neighbouring move, the node shift χ that explains it and assert Z·χ equals
// the prefix change and ‖χ‖ ≤ Δ: the privacy argument is executable.
//
// Variances are those of the discrete noise actually added: a discrete
// Laplace of scale t has variance 2e^{−1/t}/(1−e^{−1/t})², within 1/(12t²)
// relative of the continuous 2t² the papers use.
//
// The (ε,δ) calibrations (classical and analytic Gaussian of Balle & Wang
// 2018, zCDP conversion, the ℓ2-calibrated Laplace of count-on-your-elders
// Lemma 21 / Theorem 3) are exported for reuse.
package mechanism
