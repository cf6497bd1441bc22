// Package experiment reproduces the experiments of dp-ecdf §6 (Figs 2–7
// and 10) as data (CSV) and plots (PNG), with the paper's settings (100
// runs per point, X_pois(λ) over N = 2^15 values, the Bank and Diabetes
// data sets scored by a logistic regression), for the paper's tree
// mechanism (Eq. 2) and, next to it, the better mechanisms of package
// ecdf/mechanism (k-ary tree with subtraction, Cascade Sampling, auto).
//
// Figures: fig2 (smoothing ratio ‖F−F́‖²/‖F−F̂‖² vs ε, tree; fig2-kary
// and fig2-cascade for the other mechanisms, with tree-l2 over their own
// noise terms), fig3 (the same vs λ at ε = 1), fig4 (ECDF and inverse
// ECDF MSE), fig5 (ROC area error on Bank), fig6 and fig10
// (Hosmer–Lemeshow relative MSE on Bank and Diabetes), fig7 and
// fig7-ratio (smoothing time vs N, absolute and relative to the O(N)
// PAVA in the same run).
//
// The experiments run in the trusted-curator setting: one noise draw per
// release, straight from the ecdf releases. A two-server deployment
// (aggregation's additive or dcf backends) computes the same prefix sums
// exactly and adds one full-scale noise draw per server, so its output
// distribution is that of the curator with twice the variance (each MSE
// here doubles); nothing else changes.
//
// Each point is the mean over Config.Runs independent releases, with its
// standard error (sample standard deviation over √runs) drawn as an error
// bar, so that a difference between curves can be told from run-to-run
// spread. The noise comes from crypto/rand as in production; the data
// (X_pois, the train/test split) from Config.Seed.
package experiment
