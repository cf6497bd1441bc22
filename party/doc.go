// Package party is the data owner's side of fedecdf's two-server secure
// sum (dp-ecdf §4.1–4.2). A party holds one instance (a score, a 0/1
// label and optionally a predicted probability), bins its score on the
// public grid and turns it into the payload vector
//
//	payload = (1, y, 1 − y, round(p·2^32))      (payload.Count … Probability)
//
// whose prefix sums Σ_parties payload_c·1[bin ≤ i] are the U-statistics
// of dp-ecdf Eq. (4) (count: ECDF; label and 1 − label: ROC; probability:
// Hosmer–Lemeshow expected counts, in fixed point with scale 2^32).
//
// It never sends its instance. With the additive backend (§4.1) it
// answers every query batch with additive shares mod 2^64 of its kernel
// values payload_c·1[bin ≤ i], a pseudorandom share to the leader
// (ChaCha20 under a secret seed of its own, at the component and prefix)
// and the difference to the helper; each share alone reveals nothing,
// and a prefix's shares are the same in every batch. It sends them from
// the peer it enrolled from, bound to the batch by its digest, so the
// servers can refuse shares forged in its name or computed for another
// batch (package server). With the dcf
// backend (§4.2) it uploads once the two keys of a distributed comparison
// function for its bin and whole payload vector, and is then done. Every
// report carries a random 16-byte report ID (crypto/rand) by which the
// servers drop duplicates and agree on the set of reports.
package party
