package errcode

import "slices"

// Code identifies one sentinel error on the wire. Zero is no code.
type Code uint16

// The codes of the sentinels that cross the wire, by owning package. A
// new sentinel takes the next free number; none is ever renumbered.
const (
	_ Code = iota
	// internal/protocol
	Malformed
	// internal/ledger
	BudgetExhausted
	// internal/verify
	ReportMalformed
	ReportMismatch
	ReportProof
	ReportReplay
	// server
	UnknownDataset
	UnknownRelease
	ReleaseExists
	NotLeader
	TooFewReports
	ReleasePending
	ReleaseAborted
	ManifestMismatch
	NotCharged
	ReleaseBusy
	Busy
	Policy
	TooManyReports
	// internal/deploy
	Unsealable
	RelayFailed
	// server
	ReportsNotKept
	// internal/p2p (a leader relays its failure to reach the helper)
	ConnRefused
	PeerMismatch
	NoRoute
	DialTimeout
	ConnReset
	ResourceLimit
	// server: a release's report set is no longer held whole
	ReportSetChanged
	// server: the two ledgers disagree on their release counts
	LedgerRewound
	// internal/protocol: a standby process refuses a request only the
	// role's coordinator serves
	Standby
	// server: a stored upload read back is not the one the server
	// accepted (the store was edited or damaged)
	UploadChanged
)

// MaxCodes bounds the codes [Of] returns for one error (and a wire
// message carries).
const MaxCodes = 16

// sentinel is an error with a code.
type sentinel struct {
	code Code
	text string
}

func (e *sentinel) Error() string { return e.text }

// New returns a sentinel error with the given code and text: each call
// returns a distinct error, and a package makes each of its sentinels
// once, with its own code.
func New(code Code, text string) error {
	return &sentinel{code: code, text: text}
}

// CodeOf returns the code of a sentinel made by [New] (not of an error
// wrapping it), or zero.
func CodeOf(err error) Code {
	if s, ok := err.(*sentinel); ok {
		return s.code
	}
	return 0
}

// Carrier is an error that stands for a peer's refusal and carries the
// codes that refusal was sent with (internal/protocol's RemoteError).
type Carrier interface {
	error
	WireCodes() []Code
}

// Of returns the codes of the coded errors in err's tree, depth first
// as errors.Is walks it, each once and at most [MaxCodes]: the codes of
// sentinels made by [New] and those a [Carrier] holds.
func Of(err error) []Code {
	var codes []Code
	add := func(c Code) {
		if c != 0 && len(codes) < MaxCodes && !slices.Contains(codes, c) {
			codes = append(codes, c)
		}
	}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		add(CodeOf(err))
		if c, ok := err.(Carrier); ok {
			for _, code := range c.WireCodes() {
				add(code)
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return codes
}

// Matches reports whether target is a coded sentinel whose code is
// among codes: the errors.Is of a [Carrier].
func Matches(codes []Code, target error) bool {
	c := CodeOf(target)
	return c != 0 && slices.Contains(codes, c)
}
