// Package server is the leader and helper of the two-server secure sum
// (dp-ecdf §4): each holds one additive share (§4.1) or one DCF key
// (§4.2, BCG+21) of every party's report, and answers a prefix query
// of a release with its share of Σ_parties payload_c·1[bin ≤ i] plus its
// own secret noise, drawn at the full scale of the release's mechanism
// (the tree of Eq. 2 and Theorem 3.1, or the k-ary and cascade
// mechanisms). The leader adds the helper's answer to its own, so the
// analyst sees the exact sum plus two independent noises: the output is
// (ε, δ)-DP under the release's neighbouring relation even against one
// corrupt server, at twice the variance of a trusted curator.
//
// Releases. A release fixes, at each server, the agreed report set and a
// 32-byte seed drawn from crypto/rand; every component's noise is derived
// from it (protocol.ComponentSeed, ChaCha20 streams through exact integer
// samplers), so re-querying a release — a point again, or a binary search
// of the inverse (Algorithm 1) — returns the same noise and costs no
// further budget. Creating a release charges its (ε, δ) once per privacy
// unit of its components (protocol.PrivacyUnits: Count, the {Label,
// NotLabel} pair, Probability) to the dataset's Ledger (basic composition; refused beyond the dataset's
// total), then records the seed, mechanism, components and report set in
// the ReleaseStore, and only then acknowledges. A restarted server loads
// its releases and answers them with the original noise; a crash between
// charge and record wastes budget but never releases uncharged noise.
//
// Seeds are secrets: whoever reads a server's seed of a release can
// remove that server's noise from every answer of it, leaving only the
// other server's. A durable ReleaseStore must be readable by the server
// alone (internal/store keeps them in a 0600 bbolt file, with the
// reports and the ledger).
//
// The report count. Under replace-one neighbours n is public, and the
// leader tells the analyst the n a release sums (ReleaseCreated.Reports,
// Answer.Reports). Under add/remove n itself tells D from D + x, so the
// leader tells analysts nothing of it — 0 in both fields, and no count in
// a refusal for too few reports — and they normalise by a released noisy
// total instead (ecdf.Normaliser). The helper answers only the leader and
// still tells it n, which the leader checks against its own.
package server
