package server

import "errors"

// Sentinel errors of requests a server refuses, for callers to branch on
// with errors.Is; the error's text adds the details (and, for a remote
// caller, protocol.RemoteError.Is matches them by their text). The
// other sentinels are ErrBudgetExhausted, ErrPolicy and
// ErrTooManyReports; the additive backend's rejections of reports are
// internal/verify's (ErrMalformed, ErrMismatch, ErrProof, ErrReplay).
var (
	// ErrUnknownDataset: the request names a dataset the server does not
	// hold.
	ErrUnknownDataset = errors.New("unknown dataset")
	// ErrUnknownRelease: the query names a release the server has not
	// created.
	ErrUnknownRelease = errors.New("unknown release")
	// ErrReleaseExists: the release ID is taken by a release of another
	// mechanism, components or report set.
	ErrReleaseExists = errors.New("already exists")
	// ErrNotLeader: the helper refuses a leader-only request from another
	// peer.
	ErrNotLeader = errors.New("only the leader may send it")
	// ErrTooFewReports: fewer reports are held by both servers than the
	// dataset's minimum.
	ErrTooFewReports = errors.New("fewer than the minimum")
	// ErrReleasePending: the leader recorded the release as pending, and
	// the helper has neither confirmed nor refused it (no answer, a lost
	// reply); a retry of the release ID completes or aborts it.
	ErrReleasePending = errors.New("is pending: the helper has not confirmed it")
	// ErrReleaseAborted: the helper refused the release, and both
	// servers dropped it with nothing charged.
	ErrReleaseAborted = errors.New("aborted at both servers")
	// ErrManifestMismatch: the leader and the helper run different
	// manifests (Config.Manifest); the error names the parts that differ.
	ErrManifestMismatch = errors.New("manifest mismatch")
	// ErrNotCharged: the helper refused a release after finding that it
	// holds neither a record nor a charge of it; the leader aborts it.
	ErrNotCharged = errors.New("the helper holds no charge of it")
	// ErrReleaseBusy: another request is creating the same release ID.
	ErrReleaseBusy = errors.New("is being created")
	// ErrLedgerRewound: the two servers' ledgers of the dataset hold
	// different numbers of releases, so one went back in time (its store
	// restored from an older backup); both refuse to create or answer
	// releases of the dataset until the operator restores the latest
	// state (server/ledgercheck.go).
	ErrLedgerRewound = errors.New("ledger went back in time")
)
