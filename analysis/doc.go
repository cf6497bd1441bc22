// Package analysis turns the released prefix sums of a UStat
// (aggregation.UStat) into the results every command prints: the private
// ECDF and its quantiles, ROC and PR curves, the Hosmer–Lemeshow test,
// and the guarantee sentence.
// simulate, deploy's analyst and experiment build their results here, so
// that one release gives the same result, with the same JSON keys
// (docs/json.md), whichever command reads it.
//
// # ECDF
//
// A release of the Count component gives noisy prefix counts
// ĉ_i = c_i + η(i) at the bins read. F̂(τ_i) = ĉ_i/n, with n the
// normaliser of ecdf.NewNormaliser: the public number of reports under
// replace-one, the released noisy total ĉ_N under add/remove. Smoothing
// (dp-ecdf Eq. 3, ecdf/smooth) projects F̂ onto non-decreasing curves in
// [0, 1]; CheckSmoothing is the one validation of its method. Quantiles
// are read from the smoothed curve by Algorithm 1 (binary search for
// f(i−1) < p ≤ f(i), ecdf.QuantileIndex), to one bin of the grid.
//
// # ROC and PR (dp-ecdf §5)
//
// A ROC curve is two prefix vectors of one release of the {Label,
// NotLabel} pair: positives P̂(i) and negatives M̂(i). Each is normalised
// by its own released total, F_pos = P̂/P̂(N), F_neg = M̂/M̂(N), smoothed,
// and TPR(τ_i) = 1 − F_pos(τ_i), FPR(τ_i) = 1 − F_neg(τ_i). A total below
// one instance is raised to 1 (ClampTotals, the one rule; the result
// says so in its Notes). PR points follow from TP = P̂(N)·TPR and
// FP = M̂(N)·FPR. All of it is post-processing of the one release.
//
// # Hosmer–Lemeshow (dp-ecdf Algorithm 2, Eq. 5)
//
// Algorithm 2 reads the ECDF of predicted probabilities, cuts it at its
// q/Q quantiles by Algorithm 1 and differences the released Σ1, Σy and
// Σp at the group boundaries into groups g with observed O_1g and
// expected E_1g positives; Eq. 5 is
// H = Σ_g (O_1g − E_1g)²/E_1g + (O_0g − E_0g)²/E_0g, compared with
// χ²_{G−2}. Package hosmer implements it; here HosmerPlan builds its
// plans by name (HosmerPlans), HosmerConfig holds the defaults every
// command uses (Q = HosmerGroups = 10, expected counts clipped to at
// least one instance), RunHosmer gives the result of a plan's releases
// (H undefined by noise is a result, not an error) and TrueHosmer the
// exact test it is compared with.
//
// # Intervals (post-processing over the public noise law)
//
// The noise law of a release is public (mechanism, scales, servers);
// only its draw is secret. Every interval re-draws noise of that law B
// times (DefaultIntervalDraws, a parameter of NewECDF, NewROC,
// QueryECDF and QueryROC; 0 leaves the intervals out), from a fixed
// public seed:
//
//   - ECDF: a simultaneous 95 % band F̂_i ± c·sd_i, c the 95 % quantile of
//     max_i |η_i|/sd_i (newBand), and each quantile's interval read off
//     it;
//   - ROC: the released positive and negative vectors are re-noised, the
//     curve rebuilt by the same code (clamping, smoothing), and a basic
//     bootstrap gives the AUC interval [2·AUC − q₉₇.₅, 2·AUC − q₂.₅] and,
//     at each FPR of a grid, the same for the TPR (the pointwise ROC
//     band); the population AUC interval adds the Hanley–McNeil sampling
//     variance (rocIntervals).
//
// The noise-aware Hosmer–Lemeshow p-value (hosmer.Plan.NullTest, B of
// Bootstrap) simulates the statistic under H₀ with the same law.
//
// # Guarantee
//
// Guarantee writes the privacy of a release once for every command:
// (ε, δ) under the neighbouring relation, the mechanism, and, with two
// servers, that each adds its own full-scale noise.
package analysis
