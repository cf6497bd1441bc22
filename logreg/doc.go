// Package logreg fits L2-regularised logistic regression, the classifier
// whose predicted probabilities dp-ecdf §6 evaluates privately (ROC curves,
// §4.3; the Hosmer–Lemeshow statistic, §4.4, Eq. 5). The paper trains it
// with scikit-learn (§6.1); Fit minimises the same objective as
// scikit-learn's LogisticRegression with its defaults (C = 1, lbfgs, an
// unpenalised intercept):
//
//	C·Σ_i [log(1 + e^{z_i}) − y_i·z_i] + ‖w‖²/2,   z_i = b + w·x_i,
//
// divided by C·n for numerical scale (which moves no minimiser), with the
// L-BFGS method of gonum.org/v1/gonum/optimize. Each evaluation of the
// objective and its gradient,
//
//	(1/n)·Σ_i (σ(z_i) − y_i)·(1, x_i) + (0, w)/(C·n),   σ(z) = 1/(1 + e^−z),
//
// costs one pass over the data, O(n·d); the objective is strictly convex
// for finite C, so the minimiser is unique. log(1 + e^z) and σ are
// evaluated without overflow for any z.
//
// With C = +Inf Fit computes the maximum likelihood estimate, whose
// asymptotic standard errors √diag((X̃ᵀWX̃)⁻¹), W = diag(p_i(1 − p_i)), the
// tests use to check that known coefficients are recovered.
package logreg
