// Package simulate runs a whole fedecdf deployment in one process.
//
// It runs n parties each holding one (score, label) instance, two
// servers (leader and helper) and an analyst, over the in-process
// transport. The analyst creates one release of the chosen noise
// mechanism and asks for the private ECDF at every threshold (or at |B|
// evenly spaced ones) through the chosen secure-sum backend
// (aggregation: plain, additive — one verified Prio3 upload per party,
// internal/verify — or dcf, §4.2 of dp-ecdf), with Config.Malicious
// parties sending invalid reports that the additive servers reject, and
// the report puts it next to the exact ECDF, with its error, the
// privacy spent and the communication cost counted by the transport
// (bytes per party and per server, round trips) and the wall time of
// each phase.
//
// # Statistics and budget
//
// The total ε is split (basic composition, under Config.Neighbours:
// replace-one by default), every release having δ = Config.Delta per
// privacy unit:
// ECDFShare to the ECDF of the scores, HosmerShare to the
// Hosmer–Lemeshow test (dp-ecdf Eq. 5, Algorithm 2, package hosmer; its
// ε shared evenly by the allocations named, the paper's ε/(L+9) and the
// joint one-release plan), the rest to one release of the positives' and
// negatives' prefix vectors (the pair at that ε is ε-DP: payload.
// PrivacyUnits), from which package roc builds the
// ROC and PR curves, their AUC and the area error of dp-ecdf §6.5. Every
// private curve is smoothed by ecdf/smooth (Config.Smoothing; tree-l2
// follows the release mechanism's noise terms), which is post-processing.
// A released class total below one instance is raised to 1 and each
// released expected count of an HL group to at least one instance, both
// post-processing as well.
//
// Under replace-one n is public, and the analyst normalises the ECDF (and
// sizes the HL groups) by it. Under add/remove the servers do not tell the
// analyst n (package server), who normalises by the released noisy total
// instead — the ECDF's Count prefix N, the ROC pair's prefixes N together
// for the HL groups — and the report says which (Report.Normaliser); the
// HL allocations with releases of their own are proved under replace-one
// only and are refused there.
//
// # Data
//
// The parties' scores are, as in dp-ecdf §6.1, the predicted
// probabilities of a logistic regression on the held-out rows of a table
// (LoadData): the built-in dataset.Synthetic table when no file is given,
// or any CSV table with a label column (dataset.ScoreTable: standardised
// numeric columns, one-hot categoricals, missing values, seeded split).
// A CSV with a score column can also be used as it is.
package simulate
