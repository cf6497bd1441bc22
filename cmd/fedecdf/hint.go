package main

import (
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/internal/deploy"
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
	var rel *remote.ReleaseError
	switch {
	case errors.As(err, &rel) && rel.Unsure():
		return fmt.Sprintf("read it by its ID (fedecdf query --release %v), which charges nothing more and completes it if it is pending, or aborts it at both servers", rel.Release)
	case errors.Is(err, server.ErrReleasePending):
		return "read it by its ID (fedecdf query --release ID), which charges nothing more and completes or aborts it at both servers"
	case errors.Is(err, server.ErrManifestMismatch):
		return "fedecdf manifest writes the manifest: copy that one file to both servers"
	case errors.Is(err, deploy.ErrManifestVersion):
		return "write it again with this fedecdf's `fedecdf manifest`"
	case errors.Is(err, deploy.ErrNoAnalysts):
		return "name one with fedecdf manifest --analyst FILE.pub"
	case errors.Is(err, deploy.ErrSharedKey):
		return "make one with fedecdf keygen"
	}
	return ""
}
