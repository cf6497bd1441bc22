// Package server is the leader and helper of the two-server secure sum
// (dp-ecdf §4): each holds one additive share (§4.1) or one DCF key
// (§4.2, BCG+21) of every party's report, and answers a prefix query
// of a release with its share of Σ_parties payload_c·1[bin ≤ i] plus its
// own secret noise, drawn at the full scale of the release's mechanism
// (the tree of Eq. 2 and Theorem 3.1, or the k-ary and cascade
// mechanisms). The leader adds the helper's answer to its own, so the
// analyst sees the exact sum plus two independent noises: the output is
// (ε, δ)-DP under the dataset's neighbouring relation even against one
// corrupt server, at twice the variance of a trusted curator (for the
// additive backend on the terms stated below).
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
// from it (payload.ComponentSeed, ChaCha20 streams through exact integer
// samplers), so re-querying a release — a point again, or a binary search
// of the inverse (Algorithm 1) — returns the same noise and costs no
// further budget. Creating a release charges its (ε, δ) once per privacy
// unit of its components (payload.PrivacyUnits: Count, the {Label,
// NotLabel} pair, Probability) to the dataset's ledger.Ledger (basic
// composition, one rule: ledger.Admit; refused beyond the dataset's total),
// records the seed, mechanism, components and report set in the
// ReleaseStore, and only then acknowledges. Everything else that can
// fail — the policy, the budget, the mechanism's construction, the
// minimum and maximum number of reports — is checked before the charge,
// and a dataset accepts at most Dataset.MaxReports reports (what a
// record holds), so no release can be charged and then fail.
//
// Release creation. The two ledgers must never diverge, whatever link
// is cut or server crashes. A release ID is in one of three states at
// the leader, each durable in its ReleaseStore:
//
//	absent   no record: never asked for, or aborted;
//	pending  a pending record (the spec: dataset, ID, mechanism,
//	         components); its cost is held from the leader's budget
//	         (every new release is admitted against the spent budget
//	         plus the costs pending releases hold) and it may or may not
//	         be charged at either server; it answers no query;
//	created  a release record (seed, spec, agreed reports), charged.
//
// The helper's states are absent and created (a record it saved but
// whose charge a crash prevented is never loaded: absent). The
// transitions, at the leader:
//
//	absent → pending    the request passes the leader's checks (bins,
//	                    policy, budget net of held costs); the pending
//	                    record is durable before the helper hears of it.
//	pending → created   the helper acknowledges (it created the release,
//	                    or answers from its record); the leader charges
//	                    (a no-op if a crash came after an earlier charge),
//	                    then saves its release record over the pending one.
//	pending → absent    the helper refuses it after finding that it holds
//	                    neither a record nor a charge of the ID
//	                    (ErrNotCharged: the policy, its budget, too few
//	                    reports, its own record or charge failing), and
//	                    the leader has not charged it: the leader deletes
//	                    the pending record; ErrReleaseAborted.
//	pending → pending   anything else: no answer, a lost request or reply,
//	                    a refusal before the helper looked (another
//	                    manifest, a request for the ID running) or for
//	                    another release under the ID, a failed charge or
//	                    record at the leader; ErrReleasePending.
//
// A pending release leaves that state only by a retry: the analyst asks
// for the same ID with exactly the pending spec (another spec:
// ErrReleaseExists — the ledger knows a release by its ID, not its
// cost, so a retry at a larger ε must not pass as already charged), the
// analyst reads it (a query of a pending release first completes it),
// or the leader resolves its pending releases (ResolvePending, at
// start-up). Every error the leader returns while creating a release
// names the release ID and, when pending, says how to retry. Hence, at
// rest (no release pending), both ledgers hold the same releases at the
// same costs: a created release is charged at both — the helper charges
// before it acknowledges, the leader after it hears the acknowledgement
// — and an absent one at neither. Nothing is ever refunded: the leader
// aborts only what neither server has charged. One request per release ID runs
// at a time at each server (ErrReleaseBusy), and the leader takes the
// helper's ErrReleaseBusy as no answer. A restarted server loads its created
// releases and answers them with the original noise, and the leader its
// pending ones; both answer a retry of a created release, with the same
// spec, from the record, without a new charge; at the helper the leader
// must still offer every recorded report.
//
// The additive backend against one corrupt server. With §4.1 the parties
// send shares afresh for every query batch, while a release's noise is
// fixed per prefix; so a server must never answer one prefix of a
// release from two different share sums, or the difference of the two
// answers is noise-free. Three rules close this (additive.go):
//
//   - A report is bound to the transport peer that enrolled it (Upload):
//     a server accepts shares of report R only from that peer, and a
//     second enrolment of R from another peer is refused
//     (ErrWrongSender). The transport authenticates peer IDs (the Noise
//     handshake of internal/p2p; the in-process Network by
//     construction), so neither the other server nor anyone else can
//     send shares in a party's name.
//   - Shares are bound to their batch: Shares.Batch must be the digest of
//     the OpenQuery the server registered under that query ID, and the
//     batch must be open (ErrOtherBatch, ErrNoBatch). Whoever relays the
//     batch to the parties cannot make a party's shares count at other
//     prefixes or for another component. An identical re-send is
//     acknowledged as a duplicate, a different second copy refused
//     (ErrConflictingShares).
//   - Each server answers every (release, component, prefix) from the
//     share sum it first answered it with (release.fixedSums), whatever
//     batch a later query of it comes in.
//
// Parties derive their leader shares from a secret per-party ChaCha20
// seed at (component, prefix) (party.Party.AdditiveShares), so an honest
// party sends the same shares of a prefix in every batch and the two
// servers' fixed sums always belong together.
//
// Why mixing prefixes across batches reveals nothing: let S be the honest
// server and r an honest party enrolled at S from its own peer. Every
// share S holds of r at (c, i) is K_r(c, i) − o_r(c, i), r's kernel
// payload_c·1[bin ≤ i] minus the share o_r r sent the other server, for
// the very (c, i) S registered. S's fixed sum at (c, i) is thus
// Σ_honest (K_r − o_r) + Σ_controlled v_r, where the v_r of the reports
// the adversary controls (its own parties, or IDs it enrolled first) are
// known to it. The corrupt server knows every o_r, so its view of S's
// answers is, after subtracting known values, Σ_honest K_r(c, i) +
// η_S(c, i) at each asked (c, i): coordinates of one evaluation of the
// release's mechanism on the release's fixed report set with S's noise,
// however the prefixes were split into batches. That is a post-processing
// of one (ε, δ)-DP release, charged once, at one server's noise
// (variance Mechanism.PrefixVariance, not twice it).
//
// What holds, and what does not, for the additive backend against one
// corrupt server (leader or helper, colluding with any analysts and
// parties; the other server honest):
//
//   - Holds: every released number of a release is (ε, δ)-DP for each
//     honest party that enrolled at the honest server from its own peer,
//     under the release's neighbouring relation and at the release's
//     charged cost, with the honest server's noise alone; re-querying,
//     opening more batches, mixing prefixes across batches, forging or
//     re-sending shares, and relaying a party a different batch reveal
//     nothing more.
//   - Does not hold: integrity. The corrupt server can add anything to
//     its own share sum or drop its noise, so the answers it takes part
//     in can be wrong, undetectably; it can refuse or fail any query. The
//     contributions of parties the adversary controls are arbitrary
//     values mod 2^64 (no proof that a report is a valid one-hot kernel:
//     the verified one-shot upload of the robust-reports issue).
//   - Does not hold: inclusion. Report IDs are not bound to a party's
//     key: a corrupt leader that sees a report ID arrive (parties enrol
//     at the leader first) can enrol it at the helper first from a peer
//     of its own. The party's helper enrolment is then refused
//     (ErrWrongSender), its data never reaches the helper — it is
//     excluded, not exposed — and the adversary controls that report.
//   - Participation is not hidden from the servers: each sees which peers
//     enrolled and the exact number of agreed reports. Under add/remove
//     neighbours the guarantee against a corrupt server thus covers a
//     party's record, not the fact that it took part.
//   - The fixed share sums and the enrolling peers are kept in memory
//     only, like the additive backend's enrolments themselves (package
//     deploy runs the dcf backend only).
//
// Folding at ingestion (DCF backend). A DCF key's evaluation at every
// point of the domain is that report's share of every prefix of every
// component, and evaluation is deterministic and linear in the keys. So
// each server evaluates a key once, over the whole domain (one walk of
// its tree, fss.PrefixDomain.SumPrefixes over all N prefixes, in chunks
// of keys), when it accepts the report, adds the result into the
// dataset's aggregate — N × payload.NumComponents words mod 2^64 — and
// drops the key. A release's share of the prefix sums over its agreed
// report set A is computed once, when it is committed: the aggregate
// minus the evaluation of the held reports outside A (a report only this
// server holds), or A's evaluation afresh when A is the smaller; the keys
// needed are read back from the ReportStore the server accepted them
// into. Every query, re-read, binary search or Hosmer–Lemeshow group of
// the release then reads O(1) words per prefix, whatever n is, and a
// server holds no decoded keys beyond one chunk pending evaluation.
//
// Crash consistency of the aggregate. Invariant: at every moment a
// server's aggregate (with its pending chunk) is the sum of the
// evaluations of exactly the reports it holds, held = accepted since the
// process started and not dropped (DropReports subtracts a dropped
// report's evaluation again, its key read back from the store, before
// the caller deletes it there), and each release's sums are the
// evaluation of exactly its recorded report set. The aggregate is never persisted: a restarted
// server rebuilds it by accepting again every report of its ReportStore
// (package deploy replays its store, which made each report durable
// before acknowledging it), and computes a loaded release's sums at its
// first query from the rebuilt aggregate. A report accepted but not yet
// durable when the process dies was never acknowledged and is in neither
// the store nor the rebuilt aggregate. A release's reports are folded
// again from the store, so a restarted server answers it exactly when
// every recorded report is stored; package deploy stores a report right
// after the server accepts it, and a release recorded in that window,
// then a crash before the write, leaves the release unanswerable ("not
// held") rather than answered over another set. A release's sums are
// computed before the server charges or records it, so a release that
// needs a key the ReportStore cannot return (NoReports, a lost store) is
// refused by the helper with nothing charged (the leader aborts it) and
// stays pending at the leader (ErrReleasePending) until a retry can
// compute them.
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
//
// Layering. The package imports ecdf/mechanism, ecdf/noise, fss and the
// internal vocabulary below it (internal/payload, internal/ledger,
// internal/protocol, internal/transport, internal/wire); never
// aggregation, party, deploy or internal/store. It defines what it needs
// of its storage (ledger.Ledger, ReleaseStore: encoded records, whose
// format it owns; ReportStore: the uploads it accepted, read back to fold
// again), and deploy hands it an internal/store.Store for all three.
package server
