package sealed

import "github.com/fedecdf/fedecdf/internal/errcode"

// Sentinel errors of the sealed-upload wire format, matched with
// errors.Is; across the wire they travel as their codes.
var (
	// ErrUnsealable: a sealed upload does not open with the server's
	// HPKE key (the helper's for a relayed share, the receiving server's
	// for the sealed transport): it was tampered with, or sealed to
	// another key.
	ErrUnsealable = errcode.New(errcode.Unsealable, "does not open with the server's HPKE key")
	// ErrRelayFailed: in relay mode the leader stored its share of a
	// report but could not deliver the sealed share to the helper.
	ErrRelayFailed = errcode.New(errcode.RelayFailed, "the leader could not relay the sealed share to the helper")
)
