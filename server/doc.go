// Package server is the leader and helper of the two-server secure sum
// (dp-ecdf §4): each holds one additive share (§4.1) or one DCF key
// (§4.2, BCG+21) of every party's report, and answers a prefix query
// of a release with its share of Σ_parties payload_c·1[bin ≤ i] plus its
// own secret noise, drawn at the full scale of the release's mechanism
// (the tree of Eq. 2 and Theorem 3.1, or the k-ary and cascade
// mechanisms). The leader adds the helper's answer to its own, so the
// analyst sees the exact sum plus two independent noises: the output is
// (ε, δ)-DP under the dataset's neighbouring relation even against one
// corrupt server, at twice the variance of a trusted curator.
//
// Policy. The servers' configuration, not the analyst's request, decides
// the privacy contract of a dataset (Dataset.Policy and Dataset.Budget):
// the neighbouring relation every release is private under and charged
// in, the mechanisms a release may use, the largest δ of a release (0:
// pure ε-DP mechanisms only) and optionally the largest ε, and the total
// budget. Each server checks every CreateRelease against it on its own,
// before anything is charged, and refuses any other (ErrPolicy) — an
// add/remove release at ε is up to 2ε-DP under replace-one, so a
// relation the dataset does not account in would be charged below its
// cost. The analyst chooses only ε (and δ) within the policy, the
// mechanism among those allowed, and which components and prefixes.
//
// Releases. A release fixes, at each server, the agreed report set and a
// 32-byte seed drawn from crypto/rand; every component's noise is derived
// from it (protocol.ComponentSeed, ChaCha20 streams through exact integer
// samplers), so re-querying a release — a point again, or a binary search
// of the inverse (Algorithm 1) — returns the same noise and costs no
// further budget. Creating a release charges its (ε, δ) once per privacy
// unit of its components (protocol.PrivacyUnits: Count, the {Label,
// NotLabel} pair, Probability) to the dataset's Ledger (basic
// composition, one rule: Admit; refused beyond the dataset's total),
// records the seed, mechanism, components and report set in the
// ReleaseStore, and only then acknowledges. Everything else that can
// fail — the policy, the budget, the mechanism's construction, the
// minimum and maximum number of reports — is checked before the charge,
// and a dataset accepts at most Dataset.MaxReports reports (what a
// record holds), so no release can be charged and then fail. The helper
// records before it charges and the leader, which commits after the
// helper, charges before it records: whichever write fails, the two
// ledgers agree, and a retry of the release completes at no further
// cost. A restarted server loads its charged releases and answers them
// with the original noise (a record whose charge a crash prevented was
// never acknowledged and is not loaded); a crash between the helper's
// charge and the leader's wastes budget at one server but never
// releases uncharged noise. Both servers answer a retry of a release
// they have recorded, with the same spec, from the record, without a
// new charge.
//
// Seeds are secrets: whoever reads a server's seed of a release can
// remove that server's noise from every answer of it, leaving only the
// other server's. A durable ReleaseStore must be readable by the server
// alone (internal/store keeps them in a 0600 bbolt file, with the
// reports and the ledger).
package server
