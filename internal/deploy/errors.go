package deploy

import (
	"errors"
)

// Sentinel errors for callers to branch on with errors.Is; the error's
// text adds the details. Malformed relayed reports match
// protocol.ErrMalformed, and a server's refusals its sentinels (package
// server) by their wire codes, through protocol.RemoteError.
var (
	// ErrBudgetChanged: the manifest's total budget is not the one the
	// server's store kept its ledger under, and the operator did not
	// accept the change (ServerConfig.AcceptBudgetChange).
	ErrBudgetChanged = errors.New("total budget changed")
	// ErrStoreConfig: the manifest gives the server's stored data
	// another meaning than the one its store was created under (dataset,
	// backend, grid, payload, or the neighbouring relation after a
	// release): the server does not start, and changes nothing stored.
	ErrStoreConfig = errors.New("the manifest differs from the one the store was created under")
	// ErrUnverifiedStore: the server's store holds a bare DCF key, the
	// upload of a dcf deployment before its reports were verified
	// (manifest version 2), which no verified dataset can count.
	ErrUnverifiedStore = errors.New("the store holds unverified DCF keys")
)
