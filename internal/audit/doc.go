// Package audit lower-bounds empirically the ε of one release as the
// deployed code makes it.
//
// The bound holds with a stated confidence, in the manner of Jagielski,
// Ullman and Oprea ("Auditing Differentially Private Machine Learning:
// How Private is Private SGD?", NeurIPS 2020) and Nasr, Song, Thakurta,
// Papernot and Carlini ("Adversary Instantiation: Lower Bounds for
// Differentially Private Machine Learning", IEEE S&P 2021): run the
// mechanism many times on a pair of neighbouring data sets, distinguish
// the two sides with a test, and turn the test's error rates into a
// lower bound that no (ε, δ)-DP mechanism can exceed except with
// probability 5 %. `fedecdf audit` prints it.
//
// # What is audited
//
// One release of one payload component: the noise a server adds,
// payload.ComponentMechanism(params, component).NewRelease(
// payload.ComponentSeed(seed, component)) on a fresh 32-byte seed from
// crypto/rand — the path of a server's release record — added to the exact
// prefix sums c_i = Σ_records weight·1[bin ≤ i] (dp-ecdf Eq. 4). The
// analyst sees the sum of both servers' releases; one corrupt server
// knows its own noise, so against it and the analyst together the data
// are hidden by one release alone. That is the view audited: the N
// released prefixes y = c + η(1..N), nothing internal to the mechanism
// (its node noises are never released to anyone).
//
// # The worst-case pair
//
// A record of weight w ∈ [0, 1] in bin a adds w to the prefixes a..N, so
// a neighbour changes the prefix sums by ±1 (in record units; 2^32
// integer units for Probability) on an interval of prefixes: a suffix
// [a, N] under add/remove, [a, b−1] when a record moves from bin a to b
// under replace-one, and for the weighted components (label,
// probability) also a suffix when a weight changes from 1 to 0 (weights
// strictly inside [0, 1] are never worse: the norms below are convex in
// the change, which is linear in the two weights). Every such move is
// enumerated (O(N²) of them) and the one with the largest norm in the
// metric of the mechanism's noise is audited:
//
//   - Laplace node noise (tree, kary, partitioned). The released
//     prefixes are the node noises summed along the paths of a rooted
//     tree (a trie): the tree of dp-ecdf Eq. (2) is laminar by
//     construction, the walks of the k-ary mechanism share prefixes by
//     Proposition 12 of count-on-your-elders, and a partitioned
//     release's prefixes run through the earlier parts' totals into
//     their own part's trie. A change D of the prefixes is explained by
//     every integer node shift χ with Zχ = D, and the release is then
//     Σ_v |χ_v|/b_v-DP on that pair (b_v node v's scale: one b for the
//     tree and k-ary mechanisms, one per part for the partitioned one):
//     the pair's size is the least such Σ_v |χ_v|·b/b_v (‖χ‖₁ when every
//     scale is b, the first part's). On a tree this is a total-variation problem with
//     fixed leaves; by the coarea formula an optimum takes values in
//     {0, 1}, so one min-sum pass over the trie computes it exactly
//     (checked against a linear programme in the tests; a weighted
//     total variation has the same {0, 1} optimum). The tree's
//     worst move under add/remove is the suffix whose non-adjacent form
//     needs ⌈(L+1)/2⌉ nodes; under replace-one, an interval needing L
//     (below the mechanism's Δ = L + 1 of Thm 3.1: the audit shows the
//     over-noise; EXPERIMENTS.md, "`fedecdf audit`").
//   - Gaussian noise (gaussian-tree, cascade). The prefix noise has
//     covariance Σ (from Terms and PrefixVariance, Cascade Sampling's
//     rounding on the diagonal); a pair whose change D has Mahalanobis
//     norm μ = ‖Σ^{−1/2}D‖ has the privacy profile of the Gaussian
//     mechanism with sensitivity μ, whose exact ε at δ is the root of
//     Balle and Wang's δ(ε) (2018, Thm 8), increasing in μ: the largest μ
//     is the worst pair at every δ.
//
// # The test
//
// The statistic is the log-likelihood ratio log p(y − c′) − log p(y − c)
// of the released prefixes, the most powerful test at every threshold
// (Neyman–Pearson). For Laplace node noise it is computed exactly by one
// upward sum-product pass over the trie, summing out the latent nodes
// (the tree's inner nodes, the k-ary keys above N) with each edge's discrete
// Laplace kernel applied by two exponential recursions; for the
// Probability component's fixed-point noise the latent values live on a
// grid of b/12. For Gaussian noise it is the linear statistic
// ⟨Σ⁻¹(c′ − c), y⟩, exact for discrete-Gaussian node noise seen through
// an invertible pattern (gaussian-tree) and up to the rounding for
// Cascade Sampling. Any function of the output is a valid test: an
// approximation can only cost power, never soundness.
//
// # The bound
//
// The first half of each side's trials chooses the threshold τ (the test
// says D′ when the statistic is at least τ): the one whose Wilson bounds,
// at three standard errors to favour thresholds with enough events,
// certify the most. The second half, independent of that choice, gives
// the false-positive rate FPR = P_D(S ≥ τ) and false-negative rate FNR =
// P_D′(S < τ) and their one-sided Clopper–Pearson upper bounds (Clopper
// and Pearson 1934), each at 97.5 %, so both hold together with
// probability at least 95 %. Every (ε, δ)-DP mechanism has FPR + e^ε·FNR
// ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ (Kairouz, Oh and Viswanath 2015), so
//
//	ε ≥ max{ln((1 − δ − FNR_upper)/FPR_upper), ln((1 − δ − FPR_upper)/FNR_upper)}
//
// with confidence 95 % (δ = 0 for pure ε-DP). A bound above the claimed ε
// is a VIOLATION. A correct mechanism whose worst pair is tight (the
// k-ary ones) is flagged by chance with probability below 5 % — in
// practice well below 1 %, since both bounds must fail together.
//
// # The control
//
// The same run audits the mechanism built at 2ε (same arity for kary):
// half the node scale for the Laplace mechanisms, about half for the
// Gaussian ones. Its worst pair is 2ε-DP when the mechanism is tight on
// it, and the audit must then certify more than ε; a control that is not
// caught means the settings lack power, and a "consistent" verdict is
// weak evidence.
//
// # Power
//
// The audit certifies what the released prefixes reveal, which depends on
// the mechanism (measured at the command's defaults, N = 64, ε = 1,
// 20 000 trials per side; EXPERIMENTS.md):
//
//   - kary: when every used node has a key at most N (as for the best k
//     at N = 64), the prefixes determine the node noises, the test is the
//     node-level one, and the honest bound reaches 0.7–0.95 of ε while
//     the control is caught (1.7–1.95).
//   - tree: N prefixes hide 2N − 1 node noises. The likelihood ratio
//     averages over the inner nodes, so the privacy loss of the released
//     prefixes stays well below its worst case except in far tails: the
//     honest bound is 0.1–0.3 and the control's 0.4–0.7, not caught. At
//     N = 2 it is caught.
//   - gaussian-tree, cascade: ε at a small δ is a property of far tails
//     (events of probability near δ); at δ = 10⁻⁶ the honest bound is
//     0.2–0.3 and the control's 0.5–0.9, not caught: that takes millions
//     of trials. Gross miscalibration is caught at once: dd0303f's
//     Probability component, under-noised 10⁴–10⁷×, shows a bound at the
//     trials' limit (7.9 at 20 000).
//
// The lower bound is sound whatever the power: it exceeds the true ε of
// the released prefixes with probability at most 5 %.
//
// # Counting-on-trees (RunCountingOnTrees)
//
// hierarchy.CountingOnTrees releases node counts whose noise depends on
// the data (the sparse vector decides which counts are estimated at
// all): there is no likelihood ratio to compute and no single worst-case
// pair, so it is audited as a black box, with the same bound ε ≥
// ln((P_lo(E|D) − δ)/P_hi(E|D′)) on an event E fixed on half of the
// trials and evaluated on the other half:
//
//   - End to end: whole releases (Release, fresh crypto/rand seeds) of D,
//     w records in the first bin, and D′, one record more (add/remove)
//     or one of them moved to the second bin (replace-one); w is the
//     power of two whose first leaf a pilot finds released non-zero
//     closest to half of the time, where the classification is least
//     certain. E is a set of values of the first leaf's released count,
//     ranked by their empirical likelihood ratio on the first half. The
//     control is the release at 2ε. Power is low: the release's output
//     is coarse and each step holds a small share of ε.
//   - Step by step (hierarchy.Step, the release's own samplers and
//     comparison): the root bound and the first and last rounds'
//     truncated Laplace step, on a count and the count plus one (the
//     test a threshold on the output, most powerful for a shift of a
//     log-concave law), and sparse vector instance, on the stream of
//     Dwork–Roth's proof (queries at the threshold; in D′ the first
//     ones one lower and the last one higher; E learned over the index
//     of the first ⊤), each against its own share of one unit change's
//     budget. The control (ControlSteps) is each step with every noise
//     scale halved, caught when its bound exceeds the honest share.
//
// What it cannot check: the adaptive composition of the steps (that the
// shares add up to the claim, and that later steps' parameters may
// depend on earlier outputs) and pairs other than the one audited;
// ecdf/hierarchy proves the composition and checks it exactly
// (TestCountingOnTreesLedger). The output says so.
package audit
