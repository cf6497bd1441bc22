// Package party is the data owner's side of fedecdf's two-server secure
// sum (dp-ecdf §4.1–4.2). A party holds one instance (a score, a 0/1
// label and optionally a predicted probability), bins its score on the
// public grid and turns it into the payload vector
//
//	payload = (1, y, 1 − y, round(p·2^32))      (core.Count … core.Probability)
//
// whose prefix sums Σ_parties payload_c·1[bin ≤ i] are the U-statistics
// of dp-ecdf Eq. (4) (count: ECDF; label and 1 − label: ROC; probability:
// Hosmer–Lemeshow expected counts, in fixed point with scale 2^32).
//
// It never sends its instance, and reports once. With the additive
// backend it uploads a verified report (package internal/verify): its
// (bin, label) as a one-hot histogram over class × bin, sharded with
// Prio3 between the two servers with a proof that it is one-hot, which
// the servers check on their shares before it counts; the probability
// component is not carried. With the dcf backend (§4.2) it uploads the
// two keys of a distributed comparison function for its bin: verified
// (package internal/vdcf: field keys of its count and label, and of its
// probability where the dataset collects it, with the correlated
// randomness the servers check them with), or,
// for an unverified dataset, keys of its whole payload vector mod 2^64.
// Every report carries a random 16-byte report ID (crypto/rand) by which
// the servers drop duplicates and agree on the set of reports; for a
// verified report it is also the nonce.
//
// A party reaches the servers through [Servers], over any [core.Conn]:
// the project's in-process network and libp2p hosts, or another
// module's own transport. [Report] is a verified report as it is
// uploaded ([Upload]).
package party
