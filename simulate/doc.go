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
// Built-in data (no --data) is a seeded binary-classification sample:
// labels Bernoulli(0.3), scores Beta(5, 2) for positives and Beta(2, 5)
// for negatives (k-th order statistics of 6 uniforms), and the score is
// also the party's predicted probability.
package simulate
