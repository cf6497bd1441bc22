// Package errcode numbers the sentinel errors that cross the wire.
//
// A peer's refusal is then matched by its code, never by its text.
//
// A sentinel made by [New] carries a [Code]. A server that refuses a
// request sends [Of] its error — the codes of every coded error in its
// chain, depth first — beside the error's text (internal/protocol's
// Error message), and the caller's protocol.RemoteError matches
// errors.Is(err, target) exactly when target's code is among them: a
// remote refusal whose text merely contains another sentinel's text
// matches nothing.
//
// The codes are part of the wire format: a code is never renumbered or
// reused, and TestCodesKnownAnswer pins them. It imports nothing of
// fedecdf; the packages that own sentinels (internal/ledger,
// internal/verify, internal/protocol, server, internal/deploy) import it.
package errcode
