// Package server is the leader and helper of the two-server secure sum.
//
// In the secure sum of dp-ecdf §4 each [Server] holds one share of a
// verified Prio3 histogram (additive backend, internal/verify) or one
// DCF key (§4.2, BCG+21; verified as internal/vdcf, or unverified) of
// every party's report, and answers a prefix query of a release with its share of Σ_parties payload_c·1[bin ≤ i] plus its
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
// from it (payload.ComponentSeed, ChaCha20 streams through exact integer
// samplers), so re-querying a release — a point again, or a binary search
// of the inverse (Algorithm 1) — returns the same noise and costs no
// further budget. Creating a release charges its (ε, δ) once per privacy
// unit of its components (payload.PrivacyUnits: Count, the {Label,
// NotLabel} pair, Probability) to the dataset's [core.Ledger] (basic
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
// Restored stores. Nothing is refunded, so the number of releases on a
// ledger only grows, and at rest both ledgers hold the same releases
// (above). The leader compares its count with the helper's, outside the
// releases it holds pending (LedgerCheck: at every CheckPeer, before
// every release and before the first query of a dataset); a difference
// means one store was restored from an older backup, and both servers
// refuse to create or answer releases of the dataset (ErrLedgerRewound)
// until a check finds the counts equal (ledgercheck.go).
//
// The additive backend: one verified upload. A party uploads once, a
// Prio3Histogram report of its (bin, label) over 2N buckets (package
// internal/verify has the construction, its soundness and zero-knowledge
// argument): the Prio3 public share and one input share per server, its
// report ID serving as the Prio3 nonce. Each server checks on upload that
// its input share decodes (verify.Server.Check); one that does not is
// rejected at once as malformed (the leader tells the helper in its next
// Decide, and the helper, asked about it, answers with that verdict, so
// both count it). The others are held, undecided, until the leader
// verifies them (Server.Verify, which every release runs first), in
// batches of up to verifyBatch reports:
//
//	leader → helper  Prepare:  per report, the leader's verdict after its
//	                           own preparation and its verifier message;
//	helper → leader  Prepared: per report, the helper's verdict from both
//	                           verifier messages (or VerdictMissing: it
//	                           does not hold the report yet, which stays
//	                           undecided), and its own message;
//	leader → helper  Decide:   the leader's final verdicts.
//
// The leader's final verdict is the first rejection of (its own
// preparation, the helper's verdict, its own decision from both
// messages), else accepted; the helper counts a report only if the
// leader's final verdict and its own are both accepted. So a corrupt
// server that sends a bad verifier message, another report's, or a false
// rejection cannot make an honest report count at one server only: the
// honest server rejects it and says so, and the other rejects it too.
// Rejections are counted per reason (verify.Reason; Server.Rejected), the
// same at both. Accepted output shares are added into the dataset's
// verify.Aggregate, in the field of Prio3 (p ≈ 2^128); the verified
// reports are the dataset's report set, which the release agreement
// intersects as for DCF. A lost Prepared is answered again from the
// helper's tentative state, a lost Decide sent again before the next
// exchange, and the leader holds its verification lock while it agrees
// on a release, so that both servers' verified sets are equal when they
// agree; a release's sums are the whole aggregate (Aggregate.Prefixes)
// when its report set is every verified report, and otherwise (a
// release created before the dataset grew, re-read after a restart)
// the sum of its own reports' output shares, re-derived from their
// stored uploads into a fresh aggregate ("Releases bound to their
// report set" below).
//
// The DCF backend: verified keys. A party uploads once a verified DCF
// report (package internal/vdcf has the construction, its soundness and
// zero-knowledge argument): per server a pair of field DCF keys of its
// (bin, count 1, label) and a MAC, and its shares of correlated
// randomness (a seed and a few explicit shares), its report ID serving as
// the nonce. It is verified by the same exchange
// as the additive backend, which runs one interface (scheme) for
// both: on upload each server decodes its share (malformed, or a key for
// the other server or grid: mismatch, rejected at once); the leader's
// batches then carry, in Prepare, its first message (the masked
// openings d₁, d₂ of its sketch, after evaluating its key over the whole
// domain); the helper evaluates and sketches its own, computes its share
// of the check value from both openings and answers, in Prepared, with
// both its messages; the leader decides from them and sends, in Decide
// with its verdict, its own share of the check value, from which the
// helper decides. A report counts only if the check value is 0 at both;
// a corrupt leader that alters its second message makes the honest helper
// reject a valid report, or, since it sends its share after seeing the
// helper's, accept an invalid one into the helper's aggregate. Neither
// gives it more than it has: its own answers are its to falsify (it can
// add any payload to a release, or leave any report out), and the
// helper's decision is then a function of the leader's own shift, not of
// the record (internal/vdcf, "Zero knowledge"); another round, the leader
// committing to its share first, would not stop it falsifying its
// answers, so there is none. Accepted reports add their prefix vectors' count and label
// shares to the dataset's aggregate in F_p, p = 2^64 − 2^32 + 1; the
// not-label prefixes are count − label, formed at release, so label +
// not-label = count holds by construction. A dataset that collects the
// probability (Dataset.Probability) takes reports of
// vdcf.NewWithProbability, adds their probability shares too and releases
// them; one that does not refuses probability releases (ErrPolicy).
// Dataset.Unverified keeps the unchecked Z_2^64 keys of §4.2, folded as
// below: simulate --unverified measures the cost of verification with
// it (package deploy verifies both backends). An
// unverified dataset verifies nothing: a party's keys may carry any
// payload, and the servers add it in unchecked.
//
// Answers in the field. Each server's share of a prefix sum is an element
// of F_p; it adds its noise η (a signed integer, |η| < 2^63) mapped into
// the field (η mod p, verify.Lift), and the leader adds the helper's
// answer in the field and maps the result back to the signed integer in
// (−p/2, p/2) (verify.Lower), sent to the analyst as two's complement mod
// 2^64 like the DCF answers. This is exact whenever the true noisy sum v =
// Σ payload + η_leader + η_helper has |v| < 2^64 (then |v| < p/2 with a
// margin of 2^63): counts are at most 2^22 and each noise below 2^63. The
// verified DCF backend does the same in its field F_p (vdcf.Lift,
// vdcf.Lower, shares sent as Answer.Values below p), exact while |v| <
// p/2 ≈ 2^63: counts of at most 2^22 and noises each below 2^61.
//
// What the verification gives, and does not. Against malicious parties:
// a report counts only as exactly one record of the grid — one bin, count
// 1, label ∈ {0, 1} with label + (1 − label) = count — with soundness
// error below 2^-60 per report (internal/verify). Against one corrupt
// server: zero knowledge, each server's view of the verification being
// simulatable without the record; privacy of the released numbers is the
// honest server's full-scale noise, as for DCF, and since a party sends
// nothing after its upload, no query can make an honest party send shares
// again (the per-query shares of §4.1 and the rules binding them, which
// this replaces, are gone). Not given: integrity against a corrupt server,
// which can add anything to its own answers; truth (a party may report a
// false bin or label: validity is not truth); the probability component,
// which a Prio3Histogram cannot carry — an additive dataset refuses
// releases of it (ErrPolicy); Hosmer–Lemeshow on it uses the plans that
// need no probability (internal/verify, "A probability component").
// The verified DCF backend gives the same, with soundness error
// (5/(p − 1))² < 2^-123.3 per report (two independent checks, each with
// a tensor challenge drawn from the key and the report's ID once the
// report is fixed), and q times that for q reports checked under one key, sent
// adaptively (internal/vdcf), and likewise sums a
// release over fewer than its verified reports from their re-derived
// outputs; a dcf dataset
// that collects the probability (Dataset.Probability) also verifies it,
// in [0, 2^32] at the record's bin, and releases it (without it, a
// release of the probability is refused, ErrPolicy).
//
// Verification state across restarts, for both verified backends. Each
// server saves its verdicts in its VerdictStore (Config.Verdicts; package
// deploy's bbolt store) before acting on them: the leader its final
// verdicts on a batch before it counts them or sends Decide, the helper
// its tentative verdicts before it answers Prepared and its final ones
// before it counts them and acknowledges Decide, and either a malformed
// upload's rejection before refusing it. An acceptance is saved with the
// message a restarted server needs to finish the exchange: the leader's
// with its message for Decide (the verified DCF's share of the check
// value; none for the additive backend), the helper's tentative one with
// what it needs to answer the same again and settle: for the verified
// DCF its own share of the check values (never the leader's openings,
// TestStolenHelperStoreHoldsNoLeaderOpenings), for the additive backend
// the leader's message it answered. With a store, a report is verified
// only once its upload is durable (Stored): a verdict never outlives the
// upload it needs. Every acceptance, final or tentative, also keeps the
// SHA-256 digest of the upload accepted (uploadDigest; verdict record
// version 3, version 2 records read without it): an upload replayed for
// an accepted report is checked against it before anything is computed
// on it, and one that differs — a store edited by someone who fixed up
// its checksums, damage its CRC-32C missed, an upload sent again under
// an accepted report's ID — is refused naming the report
// (ErrUploadChanged; package deploy refuses to start on it as
// store.ErrDamaged, and the report can be quarantined at both servers:
// TestReplayedUploadCheckedAgainstWhatWasAccepted, deploy's
// TestDamagedReportQuarantined). Each server also keeps, for every
// report it holds, the digest of its upload as it accepted it (replayed
// and checked, or verified or folded since the start), and every later
// read-back of an accepted upload to sum it — a release re-derived or
// folded again from its reports, an unverified report dropped — is
// checked against it: an upload edited in the store while the server
// runs is refused likewise, naming the dataset, the release and the
// report, and never summed (heldReports.read,
// TestRederivedUploadCheckedAgainstWhatWasAccepted). The digest is not keyed: whoever can
// rewrite both the upload's and the verdict's records defeats it, as
// they could rewrite the ledger. The aggregate itself is never stored: a restarted
// server loads its verdicts — rejections counted at once per reason, the
// leader queueing every final verdict, with its message, to tell the
// helper again (it ignores those it has) — and, as its stored uploads
// are handed to it again, re-derives each accepted report's output from
// its own share alone (scheme.rederive: verify.Server.Rederive for the
// additive backend, the key's full-domain evaluation for the verified
// DCF), and restores the helper's tentative answers from what their
// records kept: preparing the report again and resuming with its stored
// second message (verified DCF) or following the stored leader message
// (additive) — both schemes' preparation is deterministic given the key,
// the share and the nonce, so the answer is the same. A replay in chunks has the server re-derive a chunk's
// outputs in parallel first (PrepareReplay), which also names the
// chunk's rejected reports: their uploads need no replay, and an upload
// of a rejected report is refused with its reason, never acknowledged
// as a duplicate, so its rejection counts once. So whichever server
// crashes at whatever point of the exchange, the next exchange
// finishes it: a Prepare lost or unanswered
// is sent again and answered from the same (stored) tentative verdict, a
// Decide lost is sent again, and both servers end with the same counted
// reports, aggregate and rejected counts (TestVerificationSurvivesCrashes,
// for both backends).
//
// Releases bound to their report set, for every backend. A release is
// over a closed batch: the reports agreed when it was created, whose
// sorted IDs and digest (payload.Digest) its record keeps at both
// servers. Invariants, across crashes and restarts: (1) a release is
// answered only over exactly that set — at every read each server
// recomputes the digest of the recorded reports it holds and refuses
// (ErrReportSetChanged, naming the release, both counts, both digests
// and the first missing report) unless it holds them all; a count alone
// is not enough, since a lost report and a new one keep the count and
// the same noise over the changed set would reveal their difference
// (TestReleaseBoundToItsReportSet); (2) old releases stay readable while
// the dataset grows — their sums are computed once per process from the
// batch's report IDs (the aggregate when the batch is every accepted
// report; else the unverified fold minus or plus the refolded keys, or
// the verified outputs re-derived from the stored uploads) and kept
// until it ends, so a re-read after a restart and new reports answers
// from the same set with the same noise
// (TestOldReleasesReadableAfterGrowth); (3) a report lost from a store
// (or quarantined) makes every release over it unreadable at both
// servers, never answered over another set, while releases not over it
// and new releases are unaffected; a restarted server lists such
// releases once its store is replayed (UnboundReleases). The record's
// own report list is checked against its recorded size and digest at
// every load (parseReleaseRecord).
//
// The verification key. Both servers hold the same 32-byte verify key
// (Config.VerifyKey: Prio3's, and the verified DCF's challenge seed),
// which parties and analysts must never know: a party that knew it could
// compute the query randomness and build a report that passes while
// invalid. No message carries it. Package deploy derives it from the two
// servers' static X25519 keys and the digests of the manifest they run
// (see there: each deployment has its own), so only the leader and the
// helper can compute it; a server holding another key rejects every
// report (additive: ErrMismatch at the joint randomness, or the FLP
// decision fails; verified DCF: the check value is not zero), at both
// servers. For the verified DCF the key and a report's ID fix that
// report's challenges, drawn once the report is fixed (internal/vdcf,
// "Soundness across reports"), so verification messages that leak tell a
// party nothing about the next report's challenges; they stay between
// the servers all the same.
//
// Folding at ingestion (unverified DCF backend). A DCF key's evaluation at every
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
// One Server per role at a time. A Server's state (verdicts, aggregate,
// releases held, the request running per release ID) is in its process,
// so a role has exactly one Server running on its stores; package
// deploy runs several processes per role on one PostgreSQL database by
// giving the Server to the process holding the database's lock (the
// coordinator), whose stores alone may write. Its ReportStore may then
// hold reports other processes recorded that the Server was not handed:
// deploy hands them to it, as it replays a store at start (the same
// Handle and Stored), before every release, Prepare and status,
// so a release's report set is every report committed before it was
// asked for. A process taking over builds a new Server from the stores,
// exactly as a restart does, so the invariants above (release states,
// verification across restarts, releases bound to their report set)
// hold whichever process crashes. A coordinator that loses the lock
// drops its Server unwritten, once the requests it serves ended, and
// stands by.
//
// Preparation by other processes (verified DCF). The costly local part
// of verification — walking a report's key over the whole domain and
// sketching the prefix vector — is the same at every process of a
// role, so with Config.Preparations any process of the role does it
// (Preparer, from the stored upload): it keeps the report's sketch
// (vdcf.Pending.Sketch; its own shares of inner products of its own
// vector, nothing of the other server's messages) and adds the vector
// to a fold of its own, each report in exactly one fold (package deploy
// leases batches from the database, the sketches and the batch's fold
// recorded in the lease's transaction). The coordinating Server then
// verifies a report from its sketch (vdcf.Server.Resketch: the same
// first message and decision as Prepare's), adds no output to an
// aggregate of its own, and sums a release from the folds read at one
// instant: their sum, less the re-derived outputs of the reports folded
// but not in the release (rejected, or decided after it), plus those of
// its reports no fold holds yet; when those cannot be re-derived (an
// upload deleted) it re-derives the whole release instead. Each
// upload read back is checked: a report of the release against the
// digest of the upload accepted, a report taken out of the folds
// against the SHA-256 of the upload folded, which the fold keeps
// (PreparationStore.Folds); an upload edited since refuses the release
// (ErrUploadChanged, naming the report) until the report is
// quarantined, rather than skewing the sum by the difference of two
// outputs (deploy's TestFoldedUploadEditedOnPostgres). Likewise a
// report is verified from its sketch only if the upload verified — the
// one its acceptance keeps the digest of — is the upload the sketch and
// its fold were prepared from (the SHA-256 of its canonical encoding
// against the one PreparationStore.Sketches returns, at the leader and
// at the helper): one that is not, its store edited between the
// preparation and the verification, is refused (ErrUploadChanged,
// naming the dataset and the report), left undecided, and the
// verification and releases with it until the report is quarantined
// (which takes its fold out too) — rather than prepared afresh and taken
// out of the fold, which would need the folded upload's bytes the edit
// destroyed. Nothing wrong is summed (an acceptance never keeps another
// upload than the one folded), nothing is lost silently (the report
// stays undecided until the operator quarantines it or restores its
// upload), and nothing leaks (no verifier message of the edited upload
// is sent; the refusal names only the report).
// (TestFoldedThenAcceptedUploadChecked,
// deploy's TestFoldedThenAcceptedOnPostgres.) The
// leader's Verify waits for a report to be prepared, so that the
// coordinator does not do its processes' work; a release verifies the
// others too, each server preparing there what its processes have not,
// so a release still counts every report recorded before it was asked
// for. Invariants: a fold's sum is exactly its reports' vectors; each
// report is in at most one fold, and whether folded or not, counted once
// in a release (the correction terms above); a process that dies
// holding a batch records nothing of it, and another prepares it; a
// report deleted from the store (an orphan purge, a quarantine) takes
// its sketch and its fold with it, the fold's other reports prepared
// again, so that a report recorded again under the same ID is prepared
// from its new upload (a trigger of the PostgreSQL store).
//
// Layering. The package imports core, ecdf/mechanism, ecdf/noise, fss and
// the internal vocabulary below it (internal/payload, internal/ledger,
// internal/protocol, internal/transport, internal/verify, internal/wire);
// never aggregation, party, deploy or internal/store. Its exported
// signatures name only public types (core's IDs, PeerID, Conn and
// Ledger), so that a program of another module embeds a server behind
// its own transport (Handle). It defines what it needs
// of its storage (core.Ledger, ReleaseStore: encoded records, whose
// format it owns; ReportStore: the uploads it accepted, read back to fold
// again; VerdictStore: its verification verdicts, records whose format it
// owns too), and deploy hands it an internal/store.Store for all four.
package server
