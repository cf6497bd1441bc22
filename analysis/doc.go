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
// public seed. Because the seed is fixed, a Monte-Carlo quantile is
// read at a conservative order statistic (orderIndex: 1.645 binomial
// s.d. beyond B·level), so that the draws' error cannot bias every
// interval towards undercoverage. The draws depend on the noise law and
// the seed alone, never on the released values, so they are drawn once
// per law and kept (noiseDraws, a bounded cache): later releases of the
// same law get the same intervals as if drawn afresh, at the cost of
// evaluating each interval's statistic only.
//
//   - ECDF: a simultaneous 95 % band F̂_i ± c·sd_i, c the 95 % quantile of
//     max_i |η_i|/sd_i (newBand), clipped into [0, 1] and made monotone
//     without ever shrinking to a point (bandEnds), and each quantile's interval read off
//     it, widened to the whole bin of each end (quantileInterval).
//   - ROC, the box (countBox). Let η_P, η_M be the noise of the two
//     released vectors at the read prefixes j (P_N the last) and sd_j,
//     sd'_j the exact s.d. of η_j and of η_N − η_j. With c the 95 %
//     quantile of max over both classes and all j of |η_j|/sd_j and
//     |η_N − η_j|/sd'_j, with probability 95 % every true prefix count
//     P_j and suffix count S_j = P_N − P_j of both classes lies in
//     [p̂_j ± c·sd_j] and [ŝ_j ± c·sd'_j] (and P_N + M_N = n when n is
//     public). Over that box F_j = P_j/(P_j + S_j) lies between
//     L_j = a_j/(a_j + B_j) and U_j = b_j/(b_j + A_j) (a, b the ends
//     of P_j, A, B those of S_j), made monotone with F_N = 1. The AUC
//     A(F_pos, F_neg) = Σ_j ΔF_pos,j (F_neg,j−1 + F_neg,j)/2 rises as
//     F_neg rises and as F_pos falls, so over the box it lies in
//     [A(U_pos, L_neg), A(L_pos, U_neg)], and the ROC curve lies between
//     the curves of those two pairs at every FPR (the ROC band). The
//     interval holds whenever the box does: coverage ≥ 95 % at every n
//     and ε, inside [0, 1], and of positive width while the noise s.d.
//     is positive. The population interval takes the box at 97.5 % and
//     widens it by the 97.5 % sampling interval from the Birnbaum–Klose
//     bound Var(Â) ≤ A(1 − A)/min(n₁, n₀), valid for any score laws
//     (union bound).
//   - Average precision, from the same box (envelope.averagePrecision)
//     unless both class totals exceed 50 noise s.d. (then the
//     bootstrap below, of the raw AP): the data set's
//     AP = Σ_i (G_{i+1} − G_i)·π_i, G the positives' ECDF at the read
//     prefixes and π_i = TP_i/(TP_i + FP_i) the precision at point i. Over
//     the box π_i ∈ [ℓ_i, u_i] (TP at its lower end and FP at its upper,
//     and the reverse), and as the masses are not negative,
//     AP ≥ Σ_i ΔG_i·ℓ_i = ℓ_{k−1} + Σ_{i≥1} G_i(ℓ_{i−1} − ℓ_i), smallest
//     with each G_i at the end of its envelope the sign of its
//     coefficient picks (monotonicity dropped: only wider); likewise the
//     upper end. It holds whenever the box does, so at every n and ε, but
//     it is conservative where the box is wide. Where σ_c ≤ T̂_c/50 for
//     both classes (apLinearCV) the basic bootstrap of the raw AP (as
//     the AUC's below) is used instead: the precision at the top
//     thresholds, where TP + FP is within a few σ of zero, is noise, but
//     the recall steps it weighs are then a few σ_1/T̂_1 ≤ a few %.
//   - ROC, the bootstrap: where both class totals exceed four noise s.d.
//     (the AUC's ratio is then close to linear in the noise: relative bias
//     about CV² ≤ 6 %, corrected to first order), the box is
//     needlessly wide and the AUC intervals are a basic bootstrap of the
//     raw (unclipped, unsmoothed) AUC: re-noise the released vectors,
//     take the quantiles q of AUC*, and return [2Â − q₉₇.₅, 2Â − q₂.₅]
//     clipped to [0, 1]; the population interval adds DeLong's sampling
//     variance computed from the smoothed curve's bin masses (exact for
//     binned scores, where Hanley–McNeil's exponential approximation is
//     not: auc_sampling_se reports both; rocIntervals, deLong).
//   - Noise dominates: where a class total is within 3 noise s.d. of
//     zero (σ_c > T̂_c/3), ROC.NoiseDominates is set and a note says so;
//     the box then gives intervals near [0, 1]. With the tree over N bins
//     at ε_v per class vector and S servers, σ_c = √(S·V_N)/ε_v (V_N the
//     total's variance at ε_v = 1), so the flag is raised below
//     n·min(π, 1 − π)·ε_v < 3√(S·V_N) (π the prevalence); rocRegime
//     applies it to the public σ_c and the released T̂_c, and the note
//     prints both.
//
// The noise-aware Hosmer–Lemeshow p-value (hosmer.Plan.NullTest, B of
// Bootstrap) simulates the statistic under H₀ with the same law. Its
// power (HosmerPower, hosmerPower): group g adds (O − E)²/s_g² to H,
// s_g² = size·m_g(1 − m_g); with the noise, O − E has variance
// w_g·s_g² (w_g = ObservedSD_g²/s_g²) and, under a calibration-intercept
// shift a (true rate expit(logit m_g + a)), mean s_g·μ_g(a). So
// H ≈ Σ_g (√w_g Z_g + μ_g(a))², the test rejects above the 95 %
// quantile of its a = 0 law, and the smallest a with power 80 % is found
// by bisection over common normal draws. Where a > 0.5 (odds ratio
// 1.65) the output warns that the test is weak.
//
// # Guarantee
//
// Guarantee writes the privacy of a release once for every command:
// (ε, δ) under the neighbouring relation, the mechanism, and, with two
// servers, that each adds its own full-scale noise.
package analysis
