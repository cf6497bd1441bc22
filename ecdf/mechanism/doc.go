// Package mechanism holds the noise mechanisms for prefix sums over a
// grid of N bins.
//
// Their noise is data-independent and linearly structured, and its
// per-prefix variance is known exactly.
//
// Every statistic of fedecdf is a vector of prefix counts
//
//	released(i) = Σ_parties payload(x)·1[bin(x) ≤ i] + Σ_{p∈P(i)} s_p·η_p
//
// where P(i) and the coefficients s_p are the mechanism's pattern (Terms)
// and the η_p are drawn once per release from a secret seed (package
// noise) and reused for every later query of the same release, so
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
//	partitioned    three parts of the grid, each its own auto (below)  discrete Laplace, per part  ε-DP
//
// Sensitivities are exact for each neighbouring relation ([Relation]):
//
//   - tree: Δ = L under replace-one (L ≥ 1; 1 for N = 1), ⌈(L+1)/2⌉
//     under add/remove (Lemma 1: an added instance changes a suffix of
//     prefixes). dp-ecdf Thm 3.1 proves L + 1 under replace-one; the
//     exact worst case is L. A node shift χ explains a prefix change D
//     iff χ_v = g(v) − g(parent v) for a labelling g of the nodes with
//     g(leaf i) = D_i and 0 above the root, so the least ‖χ‖₁ is the
//     tree total variation of g, minimised (clamp g to [0, 1]) by a 0/1
//     labelling: a minimum cut. A move changes an interval of prefixes by
//     ±1; an induction on the height bounds the two cuts of a suffix or
//     prefix of a subtree of height h (parent labelled 0 or 1) by
//     c0 + c1 ≤ h + 1, and an interval splitting below a node at level m
//     then costs at most ⌊(1 + 2m)/2⌋ = m ≤ L. The proof is spelled out
//     at type tree; tree_test.go checks it against an exhaustive minimum over
//     all integer shifts and all moves for N ≤ 2^8, where the worst case
//     is exactly L. Against Eq. (2)'s Lap((L+1)/ε) the prefix variance
//     is (L/(L+1))² as large at the same ε.
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
// # The partitioned release
//
// "partitioned" cuts the grid into consecutive parts — the lowest ⌈N/6⌉
// bins, the middle, the highest ⌈N/6⌉ (partitionBins; one part when
// N < 3), a function of N alone — and releases each part's histogram
// with its own pure "auto" mechanism: prefix i of part j is the
// released totals of parts 1…j−1 plus part j's own prefix i − o_j. It
// suits ROC releases: the area of a ROC curve weighs most the
// prefixes at the ends of the grid, which a shallow part answers with
// fewer, smaller node noises than one deep tree (the previous parts'
// totals are paid by the middle and upper prefixes instead), so ROC
// releases use it in place of "auto" where it does (analysis.ROCParams).
//
// Privacy. Let every part be built under add/remove, at ε under
// add/remove and at ε/2 under replace-one (always pure ε-DP, δ = 0).
//
//   - Add/remove: an added or removed instance lies in one bin, hence in
//     one part j. Part j's true node values move by a shift χ_j of
//     ‖χ_j‖₁ ≤ Δ_j (its add/remove sensitivity) and no other part's
//     move at all; the parts' noises are independent, so the density of
//     all node noises changes by at most e^{‖χ_j‖₁/b_j} ≤ e^{ε}, b_j =
//     Δ_j/ε part j's Laplace scale (parallel composition). The released
//     prefixes are a post-processing of the noisy node values: ε-DP.
//   - Replace-one: a move from bin a to bin b is a removal at a and an
//     addition at b. If a and b lie in one part j the shift is the
//     difference of two addition shifts, ‖χ_j‖₁ ≤ 2Δ_j, against b_j =
//     2Δ_j/ε; if they lie in parts j ≠ j' each moves by one instance,
//     ‖χ_j‖₁/b_j + ‖χ_j'‖₁/b_j' ≤ ε/2 + ε/2. Either way ε-DP. (Building
//     each part under replace-one at ε instead would let a move across
//     two parts cost up to 2ε.)
//
// The weighted components (label, probability), which package payload
// releases under add/remove with the instance's weight w ∈ [0, 1],
// scale χ_j by w: the same bounds. TestPartitionedPrivacy builds χ for
// every added instance and every move at small N, checks that the Terms
// map it to the change of every prefix and that Σ_v |χ_v|/b_v ≤ ε in
// exact arithmetic.
//
// Nodes of unequal variance. A part's node scale depends on its own
// sensitivity, so the parts' node noises differ in variance while the
// interface has one NodeVariance. Part j's node variables are its node
// noises scaled to the first part's variance, with coefficients
// ±√(V_j/V_1) in Terms: every prefix noise and covariance is the same,
// and a least-squares fit over the Terms (smoothing tree-l2) is then the
// generalised one in the nodes' own variances. The audit's exact
// likelihood (internal/audit) models Laplace nodes of one scale with
// coefficients ±1 and refuses other coefficients.
//
// # Calibration
//
// The noise is calibrated by an explicit sensitivity, never by rescaling
// ε. Params.Unit is the number of integer units per unit of a record's
// contribution (2^32 for fixed-point probabilities): every Laplace scale
// and every Gaussian σ is multiplied by it, which is right for every
// mechanism, including the Gaussian and ℓ2-Laplace ones whose noise does
// not scale like 1/ε. Every scale is rounded up, never to nearest: a
// Laplace scale b satisfies b·ε ≥ Unit·Δ and a Gaussian σ² satisfies
// σ²·2ρ ≥ Unit²·M in exact rational arithmetic, so the realised ε never
// exceeds the claim; and a scale finer than the samplers' 2^−62 becomes
// 2^−62, so a huge ε (the noise-free check) gives exact counts instead
// of an error. A mechanism whose prefix noise would have a standard
// deviation above maxPrefixStdDev = 2^50 units, where it could wrap the
// 64-bit share domain, is refused with ErrNoiseTooLarge.
//
// Variances are those of the discrete noise actually added, in integer
// units: a discrete Laplace of scale t has variance
// 2e^{−1/t}/(1−e^{−1/t})², within 1/(12t²) relative of the continuous
// 2t² the papers use.
//
// The (ε,δ) calibrations (classical and analytic Gaussian of Balle & Wang
// 2018, zCDP conversion, the ℓ2-calibrated Laplace of count-on-your-elders
// Lemma 21 / Theorem 3) are exported for reuse.
//
// # Releases and timing
//
// NewRelease draws every node noise a release can ever use, before it
// returns: each node from its own ChaCha20 stream
// noise.Seed(seed).Stream(domain, node), by the exact rejection samplers
// of package noise, whose work grows with the value drawn. PrefixNoise
// then only adds stored values and reads no randomness, so the time a
// server takes to answer, and in particular its first answers, does not
// depend on the noise. Creation itself computes a fixed budget of
// stream words per node (noise.SampleFixed: 136–408 for the discrete
// Laplace, 448–736 for the discrete Gaussian, by the public scale)
// whatever the sampler reads of them, so its time does not depend on
// the noise either, except with probability at most 2^−40 per node that
// a draw needs more — a bound derived in package noise ("Fixed work";
// nodes.go, "Fixed work at release creation"). A release costs that keystream, one sample and 8 bytes per
// node (BenchmarkNewRelease; figures in EXPERIMENTS.md); large releases
// are drawn on all cores.
//
// # Stability
//
// The derivation seed → node stream → node noise → prefix noise is a
// stability contract: servers persist only a release's seed and
// re-derive its noise from it after every restart, so every version must
// give the same noise for the same seed and Params. Changing it — a
// stream domain or node numbering, a sensitivity, a calibration or its
// rounding, the node samplers (package noise), the prefix patterns or
// cascade's rounding — is a versioned, breaking change: a server
// re-deriving an old release with new noise would hand an analyst a
// second independent draw of the same statistic to average with the
// first. A partitioned release draws part j (0-based) from the seed made
// of the first 32 bytes of noise.Seed(seed).Stream("part", j), each part's
// nodes then from that seed's streams. kat_test.go pins the contract with known-answer tests (SHA-256 of
// the prefix noises of fixed-seed releases of every mechanism); when they
// fail, bump the stored-release version rather than the constants.
package mechanism
