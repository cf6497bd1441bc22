// Package hosmer computes the Hosmer–Lemeshow calibration statistic
// privately from released prefix sums.
//
// The statistic and its p-value follow dp-ecdf §5.2 (Eq. 5, Algorithm
// 2, Theorem 5.1 and its proof in Appendix 0.A.2).
//
// # Statistic
//
// The instances are ranked by predicted probability p and split into Q
// quantile groups (Q = 10 by default); with O_1g = Σy, E_1g = Σp over
// group g and O_0g, E_0g the same for the negatives (group size minus
// those),
//
//	H = Σ_g (O_1g − E_1g)²/E_1g + (O_0g − E_0g)²/E_0g      (Eq. 5)
//
// compared with χ² with Q − 2 degrees of freedom ([Statistic], [PValue]).
//
// # Algorithm 2 on prefix sums
//
// On the public grid τ_1 < … < τ_N over [0, 1] (bin(p) = min{i : p ≤ τ_i}),
// the group thresholds t_q = F̂⁻¹(q/Q) are found by Algorithm 1 on the
// released ECDF of the probabilities (line 5), and every group sum is a
// range sum: the difference of two released prefix sums of the payload
// components count, y and p at the group's boundary bins (lines 8–9).
// Groups are the bins b_{q−1}+1..b_q, a partition (Algorithm 2's closed
// intervals [t_{q−1}, t_q] would count boundary instances twice);
// quantiles falling in one bin are merged ([Boundaries]). Released sums are
// clipped to what sums of instances can be, 0 ≤ O_1, E_1 ≤ size, and
// optionally E_1, E_0 ≥ MinExpected (post-processing). With the noise
// off, the result is exactly the textbook statistic on the same groups.
//
// # Privacy: the paper's allocation (PaperPlan)
//
// Algorithm 2 sets ε' = ε/(L+9), L = ⌈log2 N⌉ (line 3). The ECDF used by
// Algorithm 1 carries Lap(1/ε') noise per tree node, i.e. the tree of
// Eq. 2 at (L+1)ε' (Theorem 3.1: Lap((L+1)/ε) is ε-DP), however often it
// is evaluated. The 4Q statistics of lines 8–9 each get ε'; a replaced
// instance touches two groups and four statistics in each, hence 8ε'
// (Appendix 0.A.2), for (L+1)ε' + 8ε' = ε in all (Theorem 5.1).
//
// [PaperPlan] keeps this split on the prefix releases of the aggregation
// layer: a Count release at (L+1)ε' (a replace-one tree at that ε has
// Lap(L/((L+1)ε')) nodes, a little less noise than the paper's Lap(1/ε'),
// since the tree's exact replace-one sensitivity is L, not Theorem 3.1's
// L + 1: package mechanism), and one release of {Label, Probability} at
// 4ε' per component, 8ε' in total, which also pays for O_0 and E_0
// because the group sizes come from the Count release. The Probability
// component's noise is calibrated by its fixed-point sensitivity
// (payload.ComponentMechanism), so the plan holds for the (ε, δ)
// mechanisms too.
//
// (The paper's 8ε' is itself loose: an instance adds (y, 1−y, p, 1−p) to
// its group's four statistics, of ℓ1 norm exactly 2, so a replacement
// moves the 4Q-vector by at most 4 in ℓ1 and Lap(1/ε') per statistic is
// 4ε'-DP; ε' = ε/(L+5) suffices for Algorithm 2 as written.)
//
// # A better allocation (JointPlan)
//
// Release the payload vector w(x) = (y, 1 − y, p) once, as the
// components {Label, NotLabel, Probability} of one release at spec ε/2,
// and derive everything from it: the count prefixes are Label + NotLabel
// (for the quantiles and group sizes), O_1 from Label, O_0 from NotLabel,
// E_1 from Probability, E_0 = size − E_1. Aggregation noises each of these
// components with the add/remove mechanism at ε/4 (payload.
// ComponentMechanism), all at the same node scale b = Δ/(ε/4) in the
// component's units, where Δ is the mechanism's add/remove sensitivity
// (⌈(L+1)/2⌉ for the tree).
//
// Claim: this release is ε-DP under replace-one, which is what the
// aggregation ledger charges (payload.PrivacyUnits: the {Label,
// NotLabel} pair and Probability, one unit each at ε/2; that rule's
// group-privacy argument is another proof of the claim).
// Proof sketch. Replacing (a, w) by (b, w') changes component c's prefix
// vector by w'_c·1[i ≥ b] − w_c·1[i ≥ a]. If χ(a) is a node shift of ℓ1
// norm ≤ Δ explaining the unit suffix 1[i ≥ a] (it exists: that is the
// add/remove guarantee), then χ_c = w'_c·χ(b) − w_c·χ(a) explains the
// change of component c, and
//
//	Σ_c ‖χ_c‖₁ ≤ Δ·(Σ_c w_c + Σ_c w'_c) ≤ Δ·(2 + 2) = 4Δ,
//
// since y + (1 − y) + p ≤ 2 for every instance. The components' noises
// are independent with the common scale b, so the likelihood ratio of any
// output is at most exp(Σ_c ‖χ_c‖₁ / b) ≤ exp(4Δ·ε/(4Δ)) = e^ε. (For
// discrete noise the shifts must be integers in the components' units:
// they are, because counts are integers and Probability is in fixed point
// with p·2^32 integer.) The ROC pair {Label, NotLabel} is the special case
// Σ w_c = 1: 2Δ, so spec ε_c gives ε_c-DP (one privacy unit).
// TestJointSensitivityByEnumeration checks every step on the real tree
// mechanism for N = 2^L ≤ 16: the suffix shifts, Z·χ_c equal to each
// component's change for every (bin, label, probability) replacement
// with p on a quarter grid, and Σ_c ‖χ_c‖₁ ≤ 4Δ (reached for odd L).
//
// What it buys, at N = 1024 (L = 10, Δ = 6) and ε = 1, in tree node
// scales: the paper plan has 19 on counts and 57 on Σy and Σp; the joint
// plan 24 on each of y, 1 − y, p (so 24·√2 on counts). The group sums
// that dominate H (O_1, E_1) get (57/24)² ≈ 5.6 times less noise
// variance, O_0 and E_0 ≈ 6.3 and 2.1 times less; only the quantile
// boundaries get ≈ 3.2 times more, and they need little accuracy (any
// grouping gives a valid HL test).
//
// # The best allocation: none of its own (GridPlan)
//
// On a grid over the probabilities, every instance in bin i has
// p ∈ (τ_{i−1}, τ_i], so with m_i = (τ_{i−1} + τ_i)/2 ([BinCenters])
//
//	|E_1g − Σ_{i∈g} c_i·m_i| ≤ size_g · max_i (τ_i − τ_{i−1})/2,
//
// and E_1 needs no Probability release: [GridPlan] releases {Label,
// NotLabel} once at spec ε — one privacy unit (payload.PrivacyUnits),
// ε-DP under replace-one, and exactly the release of a private ROC curve
// on the same grid, so a deployment that has released the ROC curve gets
// the HL test as post-processing. E_1's noise is then the per-bin count
// noise weighted by m_i, small exactly in the low-risk groups whose small
// E_1 makes H explode (dp-ecdf §6.6), and O_1 and the counts get the
// whole ε instead of ε/4 ([JointPlan]'s add/remove ε/4 per component
// against ε/2 here): 4 times less noise variance. Measured (Fig. 6, Bank,
// ε = 1, k-ary, each class's prefix curve smoothed as Config.Smooth
// says): relative MSE of H 0.072 against 1.5e3 (joint) and 2.0e5
// (paper); EXPERIMENTS.md has the curves.
//
// # Debiasing
//
// Noise in D_g = O_1g − E_1g inflates H by V_g(1/E_1g + 1/E_0g) on
// average (V_g = Var D_g). [DebiasedStatistic] subtracts it using the
// mechanism's exact range-sum variances (mechanism.RangeVariance,
// Config.Debias). It removes the dominant error at small ε (Fig. 6 tree,
// ε = 1: relative MSE 2.4 → 1.1), but at larger ε it can cost up to 5
// times in MSE, and it is off by default. V_g is the unconditional
// variance, while the groups are cut where the same noisy counts cross
// q/Q: a group's released size is ≈ n/Q by construction and absorbs part
// of the noise of its sums, so the noise left in D_g is smaller than V_g
// (on the grid, smoothing ignored overstates it further). A variance
// conditional on the cut would be needed to debias well.
package hosmer
