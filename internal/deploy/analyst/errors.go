package analyst

import "errors"

// Sentinel errors for callers to branch on with errors.Is; the error's
// text adds the details.
var (
	// ErrNotAnalyst: NewAnalyst was given a key whose peer ID is not an
	// analyst of the manifest (the leader would refuse its queries).
	ErrNotAnalyst = errors.New("is not an analyst of the manifest")
	// ErrNotStatusKey: AskStatus was given a key whose peer ID is neither
	// an analyst's nor an operator's of the manifest.
	ErrNotStatusKey = errors.New("is neither an analyst nor an operator of the manifest")
)
