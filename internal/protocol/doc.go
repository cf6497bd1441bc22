// Package protocol is the message layer of fedecdf's two-server secure
// sum.
//
// It holds the messages parties, servers and analysts exchange (dp-ecdf
// §4.1–4.2), with their versioned, length-capped binary encoding, and
// Call, a typed request over an internal/transport connection. The
// vocabulary the messages carry — payload components, identifiers, each
// component's noise mechanism and seed — is package internal/payload.
//
// A party with an instance in bin b contributes the payload vector
// (1, y, 1−y, round(p·2^32)); a query asks for the prefix sums
// Σ_parties payload_c·1[b ≤ i] of one component c at a sorted list of
// prefixes i, plus the secret noise of a release (dp-ecdf Eq. 4: the
// U-statistic Û_φ(X, I) of §2 with φ = payload_c·1[bin ≤ τ_i] and I the
// mechanism's noise indices for prefix i).
//
// A refused request is answered by an Error (Refusal): the refusal's
// text and the wire codes (internal/errcode) of the sentinel errors it
// wraps. The caller's RemoteError matches errors.Is(err, target) by
// those codes only, never by text.
//
// StatusRequest and Status carry fedecdf status: each server's report
// counts, ledger, releases and last errors, and the comparison of the
// two servers' report sets.
//
// It imports ecdf/mechanism, internal/errcode, internal/payload,
// internal/transport and internal/wire; nothing above them.
//
// # Stability
//
// Every message encoding is pinned by TestEncodingKnownAnswer, and the
// noise of a release by the seed derivation (payload.ComponentSeed) and
// the mechanisms' own known-answer tests. Changing an encoding is a
// breaking change that bumps Version; a message of another version is
// refused on decoding.
package protocol
