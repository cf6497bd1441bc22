package protocol

import (
	"errors"
	"strings"
)

// ErrMalformed is matched (errors.Is) by every error of Decode, and by
// the errors of the other decoders of the protocol family (Malformed):
// bytes that are no valid message of this protocol version. The error's
// text says which field or check failed.
var ErrMalformed = errors.New("malformed message")

// malformed is an error of kind ErrMalformed that keeps the text of err.
type malformed struct{ err error }

func (e malformed) Error() string   { return e.err.Error() }
func (e malformed) Unwrap() []error { return []error{ErrMalformed, e.err} }

// Malformed returns err, with its text unchanged, as an error matching
// ErrMalformed (nil if err is nil): for decoders of messages that embed
// protocol messages (relayed reports, release records).
func Malformed(err error) error {
	if err == nil || errors.Is(err, ErrMalformed) {
		return err
	}
	return malformed{err}
}

// Is reports whether target's text occurs in the peer's error text. A
// sentinel error a peer wrapped crosses the wire as text only, so this
// makes errors.Is(err, server.ErrUnknownRelease) hold for the
// RemoteError of a server's refusal as it does in process.
func (e *RemoteError) Is(target error) bool {
	return target != nil && target.Error() != "" && strings.Contains(e.Text, target.Error())
}
