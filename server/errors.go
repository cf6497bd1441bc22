package server

import "github.com/fedecdf/fedecdf/internal/errcode"

// Sentinel errors of requests a server refuses, for callers to branch on
// with errors.Is; the error's text adds the details. Each has a wire
// code (internal/errcode), by which a remote caller's errors.Is matches
// the server's refusal, never by its text. The other sentinels are
// internal/ledger's ErrBudgetExhausted, ErrBusy, ErrPolicy,
// ErrTooManyReports, ErrReportsNotKept and ErrUploadChanged (each with
// its code too: TestEverySentinelHasAWireCode); the additive backend's
// rejections of reports are internal/verify's (ErrMalformed,
// ErrMismatch, ErrProof, ErrReplay).
var (
	// ErrUnknownDataset: the request names a dataset the server does not
	// hold.
	ErrUnknownDataset = errcode.New(errcode.UnknownDataset, "unknown dataset")
	// ErrUnknownRelease: the query names a release the server has not
	// created.
	ErrUnknownRelease = errcode.New(errcode.UnknownRelease, "unknown release")
	// ErrReleaseExists: the release ID is taken by a release of another
	// mechanism, components or report set.
	ErrReleaseExists = errcode.New(errcode.ReleaseExists, "already exists")
	// ErrNotLeader: the helper refuses a leader-only request from another
	// peer.
	ErrNotLeader = errcode.New(errcode.NotLeader, "only the leader may send it")
	// ErrTooFewReports: fewer reports are held by both servers than the
	// dataset's minimum.
	ErrTooFewReports = errcode.New(errcode.TooFewReports, "fewer than the minimum")
	// ErrReleasePending: the leader recorded the release as pending, and
	// the helper has neither confirmed nor refused it (no answer, a lost
	// reply); a retry of the release ID completes or aborts it.
	ErrReleasePending = errcode.New(errcode.ReleasePending, "is pending: the helper has not confirmed it")
	// ErrReleaseAborted: the helper refused the release, and both
	// servers dropped it with nothing charged.
	ErrReleaseAborted = errcode.New(errcode.ReleaseAborted, "aborted at both servers")
	// ErrManifestMismatch: the leader and the helper run different
	// manifests (Config.Manifest); the error names the parts that differ.
	ErrManifestMismatch = errcode.New(errcode.ManifestMismatch, "manifest mismatch")
	// ErrNotCharged: the helper refused a release after finding that it
	// holds neither a record nor a charge of it; the leader aborts it.
	ErrNotCharged = errcode.New(errcode.NotCharged, "the helper holds no charge of it")
	// ErrReleaseBusy: another request is creating the same release ID.
	ErrReleaseBusy = errcode.New(errcode.ReleaseBusy, "is being created")
	// ErrReportSetChanged: the server no longer holds every report of
	// the set the release was created over (a store lost or quarantined
	// one); it refuses to answer the release rather than answer it with
	// the same noise over another set (checkBound).
	ErrReportSetChanged = errcode.New(errcode.ReportSetChanged, "report set changed")
	// ErrLedgerRewound: the two servers' ledgers of the dataset hold
	// different numbers of releases, so one went back in time (its store
	// restored from an older backup); both refuse to create or answer
	// releases of the dataset until the operator restores the latest
	// state (server/ledgercheck.go).
	ErrLedgerRewound = errcode.New(errcode.LedgerRewound, "ledger went back in time")
)
