// Package stattest holds the statistics of the zero-knowledge smoke
// tests.
//
// The tests of internal/verify and internal/vdcf share Pearson's χ² of
// the hypothesis that 16 nibble counts are uniform, and the limit it is
// compared with. The timing tests of fixed-work noise draws (packages
// noise, mechanism, hierarchy) share a correlation and regression slope
// (Regression).
//
// Under uniformity the statistic Σ (O_i − E_i)²/E_i, E_i = n/16, is
// asymptotically χ² with 15 degrees of freedom; NibbleLimit is the
// quantile of χ²_15 exceeded with probability 2.5·10⁻⁷, so a test that
// compares k statistics with it fails a correct implementation with
// probability below k·2.5·10⁻⁷.
package stattest
