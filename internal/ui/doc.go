// Package ui serves the analyst's web view of a deployment (fedecdf ui):
// server-rendered pages of the dataset's policy and budget, its releases,
// a form creating a release, and each release's results — the ECDF with
// its simultaneous 95 % band and quantile intervals, the ROC and PR curves
// with the ROC band and both AUC intervals, and the Hosmer–Lemeshow
// calibration chart with the noise-aware and the naive p-value — and the
// same result views of a `simulate --format json` or `query --format
// json` file.
//
// Every number comes from the analyst's client (internal/deploy/analyst) and the
// analysis types, computed exactly as fedecdf query computes it: a page
// creates a release with Analyst.ECDF or Analyst.ROC, and re-reads one
// with ReadRelease, ROCRelease and HosmerRelease, so the cost charged is
// the servers' ledger charge, PrivacyUnits(components) × (ε, δ) of the
// manifest's mechanism, and no statistic has a second implementation.
//
// Security: the analyst's key stays in this process, never in a page.
// Pages load only what this server serves (Content-Security-Policy
// default-src 'none', no script at all); the Host header must name the
// listening address (no DNS rebinding); every state-changing request is
// a POST carrying the session's CSRF token, HMAC-SHA256(server key,
// session ID), and an Origin header equal to the server's own.
package ui
