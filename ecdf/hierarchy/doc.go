// Package hierarchy holds hierarchical histograms: the node counts of a
// b-ary tree over the grid, the error measure of counting-on-trees
// (Ghazi, Kamath, Kumar, Manurangsi, Wu, "On Differentially Private
// Counting on Trees") and its (ε,δ) release of every node count.
//
// # The tree
//
// Tree lays a b-ary tree over N bins: level 0 is the root, level d − 1
// the leaves (bins), node j of level ℓ covers b^(d−1−ℓ) consecutive bins.
// Its node counts w_v = Σ_{leaves u under v} x_u are the weights of the
// paper's Problem 1.2; the ranges of the binary and k-ary mechanisms of
// package mechanism are the nodes of the trees with b = 2 and b = k.
//
// # The error measure
//
// Definition 1.4: an estimate y′ of a true count y ≥ 0 has
//
//	α-mRMSE(y′, y) = √E[max(|y′ − y| − α·y, 0)²],
//
// the RMSE left after a multiplicative slack α·y is forgiven (α = 0 is the
// RMSE); the α-mMRMSE of a mechanism is its largest α-mRMSE over the
// nodes (MRMSE over draws, MultiplicativeError its integrand). Appendix B
// relates it to the smoothed relative error SRE_τ = E|y′ − y|/max(y, τ)
// used by empirical evaluations: Lemma B.1, SRE_τ ≤ α + α-mRMSE/τ
// (SmoothedRelativeError, SmoothedBound).
//
// For noise added independently of the data, α-mRMSE(y) falls with y, so
// its largest value over all data sets is the RMSE at y = 0: the
// mechanisms of package mechanism (Laplace and Gaussian, Corollary 2.7's
// baselines, whose optimality Theorems 5.1 and 5.2 prove) gain nothing
// from α in the worst case. Only a data-dependent algorithm can.
//
// # The (ε,δ) algorithm of Theorem 4.1 (CountingOnTrees)
//
// A unit change is one leaf count moving by ±1: an add/remove neighbour
// is one, a replace-one neighbour (a record moved from bin a to bin b)
// two. The algorithm is built to be (ε_u, δ_u)-DP against one unit change
// (unitBudget) and reads its noise from one ChaCha20 stream of the seed.
//
//  1. Root bound (Algorithm 4, Line 2): U = w_root + Z + A₀ with
//     Z ~ TLap_Z(t₀, A₀) at (ε_u, δ_u)·rootShare; U ≥ w_root always.
//  2. Schedule (Theorem A.1, from U alone): ρ = (1+sα)/(1−sα) for a
//     spacing s ∈ (0, 1], thresholds τ_i = ⌈U/ρ^i⌉ for i = 1..m, round
//     budgets (ε_i, δ_i) ∝ ρ^{i−m} summing to (ε_u, δ_u)·(1 − rootShare)
//     (geometric, so the last, lowest thresholds get the most and the
//     margin Δ_i = A_i + 2a_i stays about κ·τ_i in every round, Lemma
//     4.6's Equations 5 and 6), stopping at the first τ_m with
//     κ·τ_m ≤ Δ_m. With s = 1 the spacing uses all of the slack α; with
//     s < 1 the slack (1 − s)α·τ_i left absorbs the margins, so a node
//     marked in round i has an error that the multiplicative slack
//     forgives entirely when Δ_{i−1} and A_i are below about
//     2(1 − s)α·τ_i. (s, κ) is the pair of {1, ¾, ½} × {⅛, ¼, ½, 1, 2}·α
//     whose PredictedMRMSE (the schedule's worst-case error for U = 2^20)
//     is least: public parameters only, so any choice is private.
//  3. Round i (Algorithm 2, Reduction) runs Classification on every tree
//     of the forest F_i (F_1 = {the tree}) at τ_i; the nodes it marks get
//     the estimate ((1+α)L_i + (1−α)H_{i−1})/2, the best for a count known
//     to lie in [L_i, H_{i−1}], with L_i = τ_i − A_i and H_0 = U,
//     H_i = τ_i + A_i + 2a_i; the maximal unmarked subtrees form F_{i+1}.
//     Nodes never marked are released as 0 (Line 11).
//  4. Classification (Algorithm 1) of a tree at τ with cutoff c: the
//     Sparse algorithm (Algorithm 3; Dwork–Roth Alg. 2) over the levels
//     from the leaves up, query q_ℓ = the largest count among the level's
//     nodes with no marked descendant (sensitivity 1: a unit change moves
//     one node per level by 1, so the maximum by at most 1), threshold
//     τ + A + a, threshold noise ρ ~ Lap_Z(2c/ε_svt) redrawn after each ⊤,
//     query noise ν ~ Lap_Z(4c/ε_svt). On ⊤, each of those nodes gets
//     w + TLap_Z(t, A) and is marked (a transition node) with its
//     ancestors when that reaches τ. After c answers ⊤ the rest is ⊥.
//     The cutoff c is the least with c·(τ − A) > H (then, when the sparse
//     vector's noise stays within a, fewer than c transitions exist), at
//     most maxCutoff.
//
// The margin a_i = t_ν·ln(2d/β_i) + t_ρ·ln(2c/β_i) bounds |ν − ρ| except
// with probability β_i = β/m (Lemma 2.9): it sets thresholds, never
// privacy. Deviation from the paper: Lemma 3.3's final clipping to a
// per-level truncated Laplace estimate is left out; it only bounds the
// error on the failure event of probability β, which the measured
// α-mRMSE includes.
//
// Truncated discrete Laplace. TLap_Z(t, A) is Lap_Z(t) (package noise)
// conditioned on |X| ≤ A by rejection, so P(X = k) = r^|k|/Z on −A..A,
// r = e^{−1/t}, Z = (1 + r − 2r^{A+1})/(1 − r). For y and y + 1 the laws
// of y + X and y + 1 + X have ratio at most e^{1/t} wherever both are
// positive, and the first has mass P(X = −A) = r^A/Z where the second has
// none (and symmetrically), so the shift is (1/t, r^A/Z)-DP: Lemma 2.8
// with the exact discrete δ. newTruncatedLaplace takes t ≥ 1/ε' and the
// least A with r^A/Z ≤ δ'; TestTruncatedLaplacePrivacy checks the
// hockey-stick divergence exactly.
//
// Privacy (Theorem 4.1's, restated for what is implemented).
//
//   - The root bound is (ε₀, δ₀)-DP against a unit change (the shift
//     above), ε₀ = rootShare·ε_u, δ₀ = rootShare·δ_u.
//   - Every later choice — m, τ_i, c_i, scales, the forests — is a function
//     of U and of earlier outputs: adaptive composition applies.
//   - AboveThreshold with integer queries of sensitivity 1 and discrete
//     Laplace noise of scales 2c/ε_svt and 4c/ε_svt is (ε_svt/c)-DP: the
//     proof of Dwork–Roth Thm 3.23 shifts ρ by 1 and the stopping query's
//     noise by 2, integer shifts whose discrete Laplace ratios are
//     e^{ε_svt/(2c)} each (TestSparseVectorPrivacy checks the exact output
//     law). Sparse with cutoff c is c such instances, each started after
//     the previous one stopped and the truncated Laplace step that
//     followed: a sequential composition, ε_svt in all. The instances'
//     queries depend on earlier outputs only, as adaptive composition allows.
//   - A truncated Laplace step estimates nodes of one level with no
//     common leaf; a unit change moves at most one of them by 1, so the
//     step is (ε_t, δ_t)-DP (parallel composition, Fact 2.4); at most c
//     steps per tree: (c·ε_t, c·δ_t) = ((1 − svtShare)·ε_i, δ_i).
//   - The trees of a forest share no leaf: one unit change reaches one of
//     them, so a round is (ε_i, δ_i)-DP (Fact 2.4), and the rounds and the
//     root bound compose (Fact 2.3) to Σ = (ε_u, δ_u), computed with a
//     1 − 10⁻¹² margin against rounding.
//   - Under add/remove (ε_u, δ_u) = (ε, δ). Under replace-one, group
//     privacy over the two unit changes (Fact 2.2: (ε_u, δ_u) becomes
//     (2ε_u, (1 + e^{ε_u})·δ_u)) with ε_u = ε/2, δ_u = δ/(1 + e^{ε/2})
//     gives (ε, δ).
//
// Hence one release of every node count is (ε, δ)-DP under the relation
// of its Params. TestCountingOnTreesLedger checks each step of this
// proof on production schedules by exact hockey-stick divergences.
// Steps exposes each randomised step with its share for `fedecdf audit`
// (internal/audit), which lower-bounds each step's ε empirically and
// catches ControlSteps, the steps with halved noise. Measured against
// the baselines in EXPERIMENTS.md ("Counting on trees").
package hierarchy
