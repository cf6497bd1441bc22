// Package mechanism holds the noise mechanisms for prefix sums over a grid
// of N bins: data-independent, linearly structured noise whose per-prefix
// variance is known in closed form.
//
// Every statistic of fedecdf is a vector of prefix counts
//
//	released(i) = Σ_parties payload(x)·1[bin(x) ≤ i] + Σ_{p∈P(i)} s_p·η_p
//
// where P(i) and the signs s_p are the mechanism's pattern (Terms) and the
// η_p are drawn once per release from a secret seed and reused for every
// later query of the same release.
package mechanism
