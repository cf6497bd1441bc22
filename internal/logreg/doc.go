// Package logreg fits L2-regularised logistic regression.
//
// It is the classifier whose predicted probabilities dp-ecdf §6
// evaluates privately (ROC curves and the Hosmer–Lemeshow statistic,
// Eq. 5). The paper trains it with scikit-learn (§6.1); Fit minimises
// the same objective as scikit-learn's LogisticRegression with its
// defaults (C = 1, an unpenalised intercept):
//
//	C·Σ_i [log(1 + e^{z_i}) − y_i·z_i] + ‖w‖²/2,   z_i = b + w·x_i,
//
// divided by C·n for numerical scale (which moves no minimiser). Where
// scikit-learn's default solver is L-BFGS, Fit uses Newton's method with a
// line search (gonum.org/v1/gonum/optimize): the gradient and Hessian
//
//	∇f = (1/n)·Σ_i (σ(z_i) − y_i)·(1, x_i) + (0, w)/(C·n),
//	∇²f = (1/n)·Σ_i σ(z_i)(1 − σ(z_i))·(1, x_i)(1, x_i)ᵀ + diag(0, 1, …, 1)/(C·n),
//
// σ(z) = 1/(1 + e^−z), are cheap because the rows are stored sparsely
// (one-hot encoded categories are mostly zero), and Newton's method
// reaches a gradient of 1e-8 in a handful of iterations where L-BFGS needs
// hundreds on the ill-conditioned one-hot problems of the paper's data
// sets. For finite C the objective is strictly convex, so the minimiser is
// unique and both solvers find the same model. log(1 + e^z) and σ are
// evaluated without overflow for any z.
//
// With C = +Inf Fit computes the maximum likelihood estimate, whose
// asymptotic standard errors √diag((X̃ᵀWX̃)⁻¹), W = diag(p_i(1 − p_i)), the
// tests use to check that known coefficients are recovered.
package logreg
