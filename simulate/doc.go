// Package simulate runs a whole fedecdf deployment in one process: n
// parties each holding one (score, label) instance, two servers (leader
// and helper) and an analyst, over the in-process transport. The analyst
// creates one release of the chosen noise mechanism and asks for the
// private ECDF at every threshold (or at |B| evenly spaced ones) through
// the chosen secure-sum backend (aggregation: plain, additive §4.1 or dcf
// §4.2 of dp-ecdf), and the report puts it next to the exact ECDF, with
// its error, the privacy spent and the communication cost counted by the
// transport (bytes per party and per server, round trips) and the wall
// time of each phase.
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
