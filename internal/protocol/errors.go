package protocol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// ErrMalformed is matched (errors.Is) by every error of Decode, and by
// the errors of the other decoders of the protocol family (Malformed):
// bytes that are no valid message of this protocol version. The error's
// text says which field or check failed.
var ErrMalformed = errcode.New(errcode.Malformed, "malformed message")

// ErrStandby is wrapped by a standby process's refusal of a request only
// the role's coordinating process serves (one that creates a release,
// charges budget or drives verification): the caller asks the
// coordinator, whose address the refusal's text names.
var ErrStandby = errcode.New(errcode.Standby, "this process stands by: only the role's coordinating process serves it")

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

// Refusal returns the Error message of a refused request: err's text,
// and the codes of the coded sentinels it wraps (errcode.Of), so that
// the caller can match them with errors.Is.
func Refusal(err error) *Error {
	return &Error{Codes: errcode.Of(err), Text: err.Error()}
}

// Refusalf is Refusal of fmt.Errorf(format, args...): wrap (%w) the
// sentinels the caller may branch on.
func Refusalf(format string, args ...any) *Error {
	return Refusal(fmt.Errorf(format, args...))
}

// Remote returns the error m stands for, as received from peer.
func (m *Error) Remote(peer transport.PeerID) *RemoteError {
	return &RemoteError{Peer: peer, Codes: m.Codes, Text: m.Text}
}

// RemoteError is an Error message returned by a peer.
type RemoteError struct {
	Peer  transport.PeerID
	Codes []errcode.Code
	Text  string
}

// Error names the peer, unless the text already starts with its name (a
// server's errors name its role).
func (e *RemoteError) Error() string {
	if strings.HasPrefix(e.Text, string(e.Peer)+": ") {
		return e.Text
	}
	return fmt.Sprintf("%s: %s", e.Peer, e.Text)
}

// Is reports whether target is a coded sentinel (errcode.New) whose code
// the peer sent: errors.Is(err, server.ErrUnknownRelease) holds for the
// RemoteError of a server's refusal as it does in process. The text is
// never compared: a refusal whose text contains a sentinel's text, or
// that wrapped another sentinel of the same text, does not match it.
func (e *RemoteError) Is(target error) bool {
	return errcode.Matches(e.Codes, target)
}

// WireCodes returns the codes the peer sent (errcode.Carrier), so that
// a server relaying a peer's refusal sends them on.
func (e *RemoteError) WireCodes() []errcode.Code { return e.Codes }

func (m *Error) encode(w *wire.Writer) {
	n := min(len(m.Codes), errcode.MaxCodes)
	w.Uint8(uint8(n))
	for _, c := range m.Codes[:n] {
		w.Uint32(uint32(c))
	}
	w.String(m.Text)
}

func (m *Error) decode(r *wire.Reader) {
	n := int(r.Uint8("error codes"))
	if n > errcode.MaxCodes {
		failf(r, "error codes: %d exceed the limit %d", n, errcode.MaxCodes)
		return
	}
	for range n {
		c := r.Uint32("error code")
		if c == 0 || c > 0xffff {
			failf(r, "error code %d is not a code", c)
			return
		}
		m.Codes = append(m.Codes, errcode.Code(c))
	}
	m.Text = r.String("error text", MaxTextLen)
}
