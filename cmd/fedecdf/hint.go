package main

import (
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/server"
)

// describe returns the text fedecdf prints for err: the error, then the
// advice a user needs to act on it (hint), which the library errors
// leave to the command line.
func describe(err error) string {
	if h := hint(err); h != "" {
		return err.Error() + "; " + h
	}
	return err.Error()
}

// hint returns the fedecdf command that resolves err, or "".
func hint(err error) string {
	if h := releaseHint(err); h != "" {
		return h
	}
	return operatorHint(err)
}

// releaseHint is the hint of a release or manifest error.
func releaseHint(err error) string {
	var rel *remote.ReleaseError
	switch {
	case errors.As(err, &rel) && rel.Unsure():
		return fmt.Sprintf("read it by its ID (fedecdf query --release %v), which charges nothing more and completes it if it is pending, or aborts it at both servers", rel.Release)
	case errors.Is(err, server.ErrReleasePending):
		return "read it by its ID (fedecdf query --release ID), which charges nothing more and completes or aborts it at both servers"
	case errors.Is(err, server.ErrManifestMismatch):
		return "fedecdf manifest writes the manifest: copy that one file to both servers"
	case errors.Is(err, manifest.ErrManifestVersion):
		return "write it again with this fedecdf's `fedecdf manifest`"
	case errors.Is(err, manifest.ErrNoAnalysts):
		return "name one with fedecdf manifest --analyst FILE.pub"
	case errors.Is(err, manifest.ErrSharedKey):
		return "make one with fedecdf keygen"
	}
	return ""
}

// operatorHint is the hint of an error starting or reaching a server:
// its store, its listening address, its budget.
func operatorHint(err error) string {
	var dial *client.DialError
	switch {
	case errors.As(err, &dial):
		return fmt.Sprintf("is `fedecdf server --role %s` running and listening for sealed uploads there? Start it, or fix the %s's upload_addr in the manifest", dial.Server, dial.Server)
	case errors.Is(err, store.ErrLocked):
		return "is another fedecdf server running on it? Stop that server, or give this one a store of its own (a file, or a PostgreSQL database or schema); on PostgreSQL, another process of the same role waits as a standby (fedecdf server on the same database)"
	case errors.Is(err, store.ErrFormat), errors.Is(err, store.ErrSchema):
		return "use the fedecdf version that wrote it (or a newer one), or start on a new store"
	case errors.Is(err, store.ErrDamaged):
		return "restore the store (its file, or its database) from a backup (a damaged report can instead be set aside at both servers: fedecdf server quarantine)"
	case errors.Is(err, store.ErrPassword):
		return "remove the password from --store and give it in PGPASSWORD or --store-password-file"
	case errors.Is(err, deploy.ErrBudgetChanged):
		return "if the change is intended, start the server with --accept-budget-change (both servers run the same manifest, so both need it); otherwise start it on the manifest the store was started with"
	case errors.Is(err, p2p.ErrAddrInUse):
		return "is another fedecdf server (or another program) listening there? Stop it, or choose another --listen address"
	}
	return ""
}
