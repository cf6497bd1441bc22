// Package store is a server's durable state, in a bbolt file or PostgreSQL.
//
// It keeps the reports the server accepted (the encoded uploads, with
// the time each was first stored, so that reports only one server holds
// can be purged after an age), its privacy-budget ledger (core.Ledger:
// per dataset, the ε and δ spent, the IDs of the releases charged and
// the total budget the ledger is kept under: [Store.Total],
// [Store.SetTotal]) and its releases (server.ReleaseStore: per release,
// the server's encoded record of its noise seed, the mechanism, the
// components and the agreed report set, or the leader's pending record
// of a release the helper has not confirmed, kept as opaque bytes), and
// for verified datasets the verification verdicts (server.VerdictStore:
// the server's encoded records per report) and the verify key the two
// servers share ([Store.CheckVerifyKey]: recorded once, another
// refused).
//
// Two stores implement Backend, the interface package deploy's server
// uses: Store, an embedded bbolt file (the default), and Postgres, a
// PostgreSQL database (pgx), chosen by OpenBackend from the --store
// value. Both keep the same encoded records (records.go, FormatVersion)
// and pass one contract test suite (contract_test.go). In PostgreSQL
// (schema.go) the dedup is a unique index on (dataset, report ID), the
// group commit inserts a batch in one transaction acknowledged after
// its commit, a charge is one serialisable transaction around
// ledger.Admit, the schema is versioned in the database with
// forward-only migrations applied at open under an advisory lock, and a
// session advisory lock keeps one coordinating process per database (or
// schema), as bbolt's file lock keeps one process per file; the other
// processes of the role open it as standbys (OpenPostgresShared,
// pgshared.go), which record uploads only, and the coordinator reads
// what they recorded with ReportsAfter.
//
// Layering: the store imports internal/ledger (Budget, Admit) and
// internal/payload (IDs), never package server; it satisfies
// server.ReleaseStore structurally, and package deploy hands it to the
// server. The server owns the record format and decodes what the store
// loads.
//
// Appended records. Report IDs are random: a B+tree keyed by them puts
// each report of a batch on a leaf page of its own, so that a commit
// rewrites a 4 KB page per report and per bucket for a record of a few
// hundred bytes. Reports and verdicts are instead appended, per dataset,
// under the bucket's next sequence number (records.go), each record
// holding its report ID: a batch's records fill the tail leaves in
// order, and a commit rewrites about the batch's bytes over the page
// size in leaves, plus the path to them. The store keeps in memory an
// index from each recorded report's ID to its record (one map entry of
// a 16-byte ID and an 8-byte sequence number per report), rebuilt from
// the records when it opens; PutReport deduplicates with it, and
// Uploads, ReceivedAt and DeleteReports find a report's record through
// it. Verdict records are only appended: a report's later record (the
// helper's final verdict after its tentative one) replaces the earlier
// when LoadVerdicts reads them, and the replaced ones stay in the file.
//
// Group commit. Reports arrive one per stream, many at once; one
// transaction (and fdatasync) per report would spend most of a server's
// disk writes on B+tree pages and meta pages rewritten for a single
// upload of a few hundred bytes. PutReport instead queues its write (the
// upload and its receipt time, taken when PutReport is called) to one committer
// goroutine, which takes every write queued, appends them together in
// queue order, and answers each only after that commit returned.
// SaveVerdicts queues its records the same way, so that a verification
// stage's verdicts share the commit of the uploads arriving meanwhile.
// There is no timer: a write reaching an idle store is committed at once, and
// the writes arriving during a commit form the next one (at most
// maxBatch), so the batch grows with the load and a lone write waits
// for one commit only. If a batch's transaction fails, each of its
// writes is retried alone, so a bad write fails only its own caller.
//
// Invariants. PutReport and SaveVerdicts return nil only after the
// bbolt transaction holding their records has been committed, its pages
// and then its meta page fdatasynced; a write whose call has not
// returned nil may or may not be in the file after a crash. A crash
// therefore leaves the file as of some commit, holding a prefix of the
// appended records in the order they were committed, and of each
// transaction all its records or none. On that state the store reads:
//
//   - each report at most once: the index holds an ID once it is
//     committed, and PutReport appends nothing for an ID it holds or is
//     appending in the same transaction, so the party's retry of an
//     unacknowledged report writes it once (and should a file hold two
//     records of a report, the first counts, the one acknowledged);
//   - a report's upload with none, some or all of its verdict records:
//     a server saves verdicts on a report only after its upload is
//     durable (server.Server.Stored), so a verdict without its upload
//     is one the server reached without the upload (a rejection it was
//     told of); the last record of a report is its verdict, and a stage
//     that did not commit is redone by the restarted server;
//   - an acknowledged report, whatever batch it shared.
//
// A server writes a report here before acknowledging it, and a release's
// cost and its record (in the order package server gives) before
// acknowledging the release, so nothing acknowledged is lost on a crash
// (ARCHITECTURE.md, "Data flow"); on restart
// the releases are restored with their original noise, the reports are
// replayed into the fresh server (package deploy deletes the uploads of
// reports rejected at verification, whose verdicts suffice), and the
// ledger continues where it stopped: re-querying an old release costs
// no budget.
//
// The file holds secrets: with a server's seed of a release, its noise
// can be subtracted from every answer of that release. Open creates it
// with mode 0600; keep it (and its backups) readable by the server only. The ledger
// follows basic composition over releases by ledger.Admit, the rule of
// every ledger.Ledger: every release of a dataset adds its (ε, δ) once,
// and a release beyond the dataset's total is refused with nothing
// recorded.
//
// Damage. bbolt checksums only its meta pages, and a damaged file can
// make it panic or fault. Open therefore first reads the file under
// bbolt's lock (checkFile): both meta pages (magic, version, checksum,
// page size), the file's size against their page count, and every page
// the newer meta reaches — the freelist and each bucket's B+tree (page
// IDs and types, elements packed where bbolt writes them, keys ordered
// within their parent's bounds, no page reached twice). A panic or
// fault bbolt still raises while opening is recovered. Every record is
// sealed (Seal: a CRC-32C of its bucket path, key and value), and Open
// checks every seal before serving, so a record under a damaged key is
// found rather than missed by a lookup; readers check them again. Any
// damage refuses with ErrDamaged naming the file (on PostgreSQL, the
// database, its DSN without the query, and the table and row) and the
// record — for a report, its ID — never skipping it or computing on it (a stored
// upload the server re-derives at restart is the one it accepted: its
// seal holds, and so does the SHA-256 digest of the upload that the
// server's verdict record of its acceptance keeps, which a CRC-32C
// recomputed by whoever edited the upload does not fix:
// server.ErrUploadChanged, refused at start as ErrDamaged). One damaged report need not cost the store: Quarantine
// (fedecdf server quarantine, run at both servers with the same IDs)
// deletes its records and refuses it if uploaded again; a release
// created over it is then refused (server.ErrReportSetChanged) and new
// releases leave it out. A structural damage is restored from a backup.
//
// Stability. The store's layout and records are versioned
// (FormatVersion, written into a new file and checked on every open;
// TestRecordsKnownAnswer pins the appended records and the seal), and each release
// record carries its own version (server's
// TestReleaseRecordKnownAnswer pins a record and the noise re-derived
// from it). A store or record of another version is refused with an
// error saying what to do, never read under other rules: an old release
// answered with new noise would let an analyst average two draws. Open
// also refuses a file that group or others may access (ErrPermissions).
package store
