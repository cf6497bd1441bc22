// Package roc computes differentially private ROC and precision–recall
// curves and the AUC.
//
// It reads them from released prefix sums, following dp-ecdf §5.1
// (Barczewski, Mawass, Ramon).
//
// # Convention
//
// A higher score means more likely positive (dp-ecdf §5.1 uses the
// opposite, lower-is-positive, convention; the curves are the same up
// to that reflection). On the public score grid τ_1 < … < τ_N with
// bin(x) = min{i : x ≤ τ_i}, let P(i) and M(i) be the numbers of
// positives and negatives with bin ≤ i, i.e. with score ≤ τ_i. Threshold
// τ_i classifies as positive the instances with score > τ_i, so
//
//	TPR(τ_i) = #{positives with score > τ_i} / #positives = 1 − P(i)/P(N) = 1 − F_pos(τ_i)
//	FPR(τ_i) = 1 − M(i)/M(N) = 1 − F_neg(τ_i)
//
// the ratio form of §5.1 (TPR = F_φTP(t)/F_φTP(c_max), reflected). The
// curve has N+1 points: i = 0 (a threshold below the grid: (1, 1)) to
// i = N (nothing above τ_N: (0, 0)); both ends are data-independent and
// exact.
//
// # Private release and its ε
//
// P and M are the prefix sums of the payload components label y and
// 1 − y (core.Label, core.NotLabel), released with noise by
// a mechanism (dp-ecdf Eq. 2 for the tree). Under the replace-one
// relation of dp-ecdf §2 (n public), replacing one instance (bin a,
// label y) by (bin b, label y') changes the pair of vectors in one of two
// ways:
//
//   - same label: one vector sees a move of one instance from bin a to
//     bin b (prefixes between a and b change by 1), the other nothing;
//   - label flips: one vector loses an instance at a (a suffix of its
//     prefixes drops by 1) and the other gains one at b.
//
// So if each vector's release is ε/2-DP both for a move and for one
// added or removed instance, the pair is ε-DP by sequential composition
// (the label flip is the worst case: ε/2 + ε/2). Both usual calibrations
// satisfy this: a replace-one tree at ε/2 (Δ = L for a move, and
// ⌈(L+1)/2⌉ ≤ L for an added instance when L ≥ 1, mechanism package), or an
// add/remove mechanism at ε/4 per added or removed instance, a move
// being one removal and one addition.
//
// The latter is what aggregation does for the Label and NotLabel
// components of a release whose spec says ε_c (payload.
// ComponentMechanism: add/remove at ε_c/2 each). By the argument above,
// with the weights y + (1 − y) = 1 of one instance spread over the two
// components, such a release of {Label, NotLabel} is ε_c-DP under
// replace-one — every replacement is one unit-weight removal and one
// unit-weight addition across the pair — and the ledger charges exactly
// ε_c (one privacy unit, payload.PrivacyUnits). A curve that must be
// ε-DP therefore uses spec ε_c = ε, where dp-ecdf §5.1's composition
// (each vector at ε/2) would leave 4 times the noise variance.
//
// # Unequal scales for the two classes (replace-one)
//
// TPR noise is divided by the number of positives and FPR noise by the
// number of negatives, so when positives are few one might give their
// vector less noise. Let both vectors use one tree-structured mechanism
// (a k-ary tree, say) whose used-node vector moves by at most a nodes in
// ℓ1 when one instance is added (add/remove sensitivity) and by at most
// r when one instance changes bin (replace-one sensitivity), a ≤ r ≤ 2a,
// with Laplace node scales 1/u for the positives and 1/v for the
// negatives. The privacy loss of a replacement is the sum over the two
// vectors of ‖node shift‖₁ times the rate, so exactly
//
//	ε_pair = max(r·u, r·v, a·(u + v))
//
// (a move within a class, each class; a label flip, one removal and one
// addition across the pair; each bound is attained by some pair of
// bins). With variance weights w₊ = 1/n₊², w₋ = 1/n₋² (the rates'
// noise), minimising w₊/u² + w₋/v² on the flip constraint gives
// u/v = (w₊/w₋)^(1/3) = (n₋/n₊)^(2/3), i.e. node scales in the ratio
// (n₊/n₋)^(2/3), then capped by r·u ≤ ε. For shapes with r = 2a, which
// are the k-ary trees chosen for add/remove, the caps force u, v ≤
// ε/(2a): the equal split, which is what the release at spec ε does, is
// then optimal. Over every k-ary shape k = 2..64 the unequal optimum
// with the true class sizes of Bank (n₊/n₋ ≈ 0.13) lowers the weighted
// variance by 4–15 % at 32–1024 bins (experiment roc-accuracy's notes,
// rocSplit): ≤ 8 % of the error's standard deviation, before paying for
// a private estimate of the class sizes. It is not implemented (it would
// need a per-component ε in the release spec and the manifest).
//
// Normalising by the released totals P̂(N), M̂(N) (not public under
// either relation), smoothing each normalised ECDF into a non-decreasing
// curve in [0, 1] (dp-ecdf Eq. 3 with p = 1 or 2; [Smoother]) and every
// quantity derived from them — TPR/FPR at every threshold, AUC, the PR
// curve — are post-processing and cost nothing more.
//
// # A partitioned release
//
// Cut the grid into consecutive parts (bins 1..L₁, L₁+1..L₂, …) and
// release each class vector's histogram over each part with its own
// mechanism, every one at the vector's full add/remove ε, a prefix
// beyond a part adding that part's released total. An instance lies in
// one bin, so adding or removing it changes one part's histogram by
// one instance and leaves the others' output laws unchanged: by
// parallel composition each vector is still ε-DP under add/remove, and
// the pair argument above (which needs only that) holds as before. It
// lets the parts where the ROC area weighs the noise most — the lowest
// scores, where the negatives crowd, and the highest — use a shallow
// mechanism with less noise per prefix than one deep tree over the
// whole grid. It is the mechanism "partitioned" of package mechanism
// (parts of ⌈N/6⌉, the rest, ⌈N/6⌉ bins; the proof, under both
// relations, is in its documentation), and the mechanism of the
// default ROC release wherever it answers the grid's end bins with less
// noise than one tree (analysis.ROCParams: the grids of 32–192 bins that
// analysis.ROCBins gives for n ≈ 10⁴–10⁵, not 256 bins).
//
// # The default estimator
//
// The default release is the partitioned one above (where
// analysis.ROCParams chooses it). analysis.NewROC,
// which query roc, simulate and experiment share, adds three steps to
// the release, none of which changes its privacy:
// under replace-one the two vectors are fitted to P(N) + M(N) = n by
// generalised least squares in their noise metric (n is public there;
// analysis's totalsFit), and the smoothed curve is interpolated between
// the thresholds (Curve.Interpolate) as the estimate of the unbinned
// curve — both post-processing of the released vectors with public
// quantities. The grid's number of bins is chosen before the data from
// n and ε alone (analysis.ROCBins), so it is public configuration like
// the grid itself. The release remains the {Label, NotLabel} pair at
// spec ε, ε-DP under replace-one by the argument above and under
// add/remove because an instance lies in exactly one of the vectors
// (payload.PrivacyUnits).
//
// # The discretisation floor
//
// Against the exact curve of a data set (every distinct score a
// threshold), a curve read from bin counts has an error that no
// interpolation removes, even without noise. Within bin i, holding a_i
// positives and b_i negatives, the exact curve is the staircase of the
// bin's instances in score order: a_i steps of 1/n₊ up and b_i of 1/n₋
// across. When that order is exchangeable between the classes (the
// positive rate does not vary within the bin), the number of positives
// among the first s of the bin's a + b instances is hypergeometric,
// Var = s·(a+b−s)·ab/(a+b)³ ≈ ab·v(1−v)/(a+b) with v = s/(a+b), and the
// staircase's vertical distance to the chord at the same FPR is
// (a+b)/b times that deviation: a Brownian bridge of variance
// a(a+b)/b · v(1−v) up-steps. The expected absolute area of a standard
// bridge is ∫₀¹ √(2v(1−v)/π) dv = √(2π)/8, so in rate units
//
//	E area(bin i) = (√(2π)/8) · (b_i/n₋) · √(a_i(a_i+b_i)/b_i) / n₊
//	              = (√(2π)/8) · √(a_i·b_i·(a_i+b_i)) / (n₊·n₋),
//
// and the floor is the sum over bins ([BinningFloor]). Under the same
// model the bridge's pointwise median is the chord, so the chord — the
// curve through the bins' points — minimises the expected area among
// all functions of the bin counts: the floor bounds every estimator
// that reads binned counts, private or not. It falls like N^(−1/2)
// (bins of m instances: Σ√(ab(a+b)) ≤ √m·√(n₊n₋) by Cauchy–Schwarz),
// not like a smooth curve's O(N⁻²) chord error: this is the
// noise-free error left at 96–128 bins whatever the interpolation
// (EXPERIMENTS.md, "Private ROC curves"). Which bins carry it depends on where the classes
// mix: on a linear grid of probabilities whose negatives crowd near 0
// the first few bins (thousands of negatives, some positives each)
// carry most of it, and a grid that is finer there (the quantiles of
// the scores, say) lowers it at the same N (experiment roc-accuracy,
// EXPERIMENTS.md).
//
// # AUC, PR curve and errors
//
// AUC is the trapezoid rule over the curve's points. On the exact curve
// of scores lying on grid thresholds it equals the Mann–Whitney statistic
// P(s⁺ > s⁻) + ½P(s⁺ = s⁻) (ties within a bin are the diagonal segments
// of the curve). Precision TP/(TP+FP), with TP = P̂(N)·TPR and
// FP = M̂(N)·FPR, is only kept where TP+FP is at least one instance (see
// Curve.PR). [AreaError] is the error measure of dp-ecdf §6.5,
// ∫|ROC_true − ROC_private| dFPR, integrated exactly between the two
// piecewise-linear curves; [AUCError] is |AUC_true − AUC_private|.
package roc
