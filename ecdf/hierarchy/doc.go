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
package hierarchy
