// Package protocol is the vocabulary shared by parties, servers and
// analysts of fedecdf's two-server secure sum (dp-ecdf §4.1–4.2): the
// payload components every party contributes, the random 16-byte
// identifiers of reports, releases and query batches, the derivation of
// each component's noise mechanism and seed, and the messages with their
// versioned, length-capped binary encoding.
//
// A party with an instance in bin b contributes the payload vector
// (1, y, 1−y, round(p·2^32)); a query asks for the prefix sums
// Σ_parties payload_c·1[b ≤ i] of one component c at a sorted list of
// prefixes i, plus the secret noise of a release (dp-ecdf Eq. 4: the
// U-statistic Û_φ(X, I) of §2 with φ = payload_c·1[bin ≤ τ_i] and I the
// mechanism's noise indices for prefix i).
//
// # Stability
//
// Every message encoding is pinned by TestEncodingKnownAnswer, and the
// noise of a release by the seed derivation (ComponentSeed) and the
// mechanisms' own known-answer tests. Changing an encoding is a
// breaking change that bumps Version; a message of another version is
// refused on decoding.
package protocol
