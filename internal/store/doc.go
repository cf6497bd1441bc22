// Package store is a server's durable state in an embedded bbolt file:
// the reports it accepted (the encoded uploads, keyed by dataset and
// report ID, with the time each was first stored, so that reports only
// one server holds can be purged after an age), its privacy-budget ledger
// (ledger.Ledger: per dataset, the ε and δ spent, the IDs of the releases
// charged and the total budget the ledger is kept under: Total, SetTotal)
// and its
// releases (server.ReleaseStore: per release, the server's encoded
// record of its noise seed, the mechanism, the components and the agreed
// report set, or the leader's pending record of a release the helper has
// not confirmed, kept as opaque bytes), and for additive datasets the
// verification verdicts (server.VerdictStore: the server's encoded
// record per report) and the verify key the two servers share
// (CheckVerifyKey: recorded once, another refused).
//
// Layering: the store imports internal/ledger (Budget, Admit) and
// internal/payload (IDs), never package server; it satisfies
// server.ReleaseStore structurally, and package deploy hands it to the
// server. The server owns the record format and decodes what the store
// loads.
//
// Group commit. Reports arrive one per stream, many at once; one
// transaction (and fdatasync) per report would spend most of a server's
// disk writes on B+tree pages and meta pages rewritten for a single
// upload of a few hundred bytes. PutReport instead queues its write (the
// upload and its receipt time, taken when PutReport is called) to one committer
// goroutine, which takes every write queued, commits them together in
// key order, and answers each only after that commit returned. There is
// no timer: a report reaching an idle store is committed at once, and
// the reports arriving during a commit form the next one (at most
// maxBatch), so the batch grows with the load and a lone report waits
// for one commit only. If a batch's transaction fails, each of its
// writes is retried alone, so a bad write fails only its own report.
//
// Invariant: PutReport returns nil only after the bbolt transaction
// holding the report has been committed, its pages and then its meta
// page fdatasynced; a report whose PutReport has not returned nil may or
// may not be in the file after a crash, and since a report is keyed by
// its ID, the party's retry of an unacknowledged report writes it once.
// So an acknowledged report is durable whatever the batch it shared.
//
// A server writes a report here before acknowledging it, and a release's
// cost and its record (in the order package server gives) before
// acknowledging the release, so nothing acknowledged is lost on a crash
// (ARCHITECTURE.md, "Data flow"); on restart
// the releases are restored with their original noise, the reports are
// replayed into the fresh server, and the ledger continues where it
// stopped: re-querying an old release costs no budget.
//
// The file holds secrets: with a server's seed of a release, its noise
// can be subtracted from every answer of that release. Open creates it
// with mode 0600; keep it (and its backups) readable by the server only. The ledger
// follows basic composition over releases by ledger.Admit, the rule of
// every ledger.Ledger: every release of a dataset adds its (ε, δ) once,
// and a release beyond the dataset's total is refused with nothing
// recorded.
//
// Stability. The store's layout and records are versioned
// (FormatVersion, written into a new file and checked on every open),
// and each release record carries its own version (server's
// TestReleaseRecordKnownAnswer pins a record and the noise re-derived
// from it). A store or record of another version is refused with an
// error saying what to do, never read under other rules: an old release
// answered with new noise would let an analyst average two draws. Open
// also refuses a file that group or others may access (ErrPermissions).
// The reports' receipt times need no version of their own: a store
// without them opens, and its reports have no time (ReceivedAt: the zero
// time).
package store
