package deploy

import "errors"

// Sentinel errors for callers to branch on with errors.Is; the error's
// text adds the details. Malformed relayed reports match
// protocol.ErrMalformed, and a server's refusals its sentinels (package
// server) through protocol.RemoteError.
var (
	// ErrNotAnalyst: NewAnalyst was given a key whose peer ID is not an
	// analyst of the manifest (the leader would refuse its queries).
	ErrNotAnalyst = errors.New("is not an analyst of the manifest")
	// ErrNotStatusKey: AskStatus was given a key whose peer ID is neither
	// an analyst's nor an operator's of the manifest.
	ErrNotStatusKey = errors.New("is neither an analyst nor an operator of the manifest")
	// ErrUnsealable: a sealed upload does not open with the helper's key:
	// it was tampered with, or sealed to another key.
	ErrUnsealable = errors.New("does not open with the helper's key")
)
