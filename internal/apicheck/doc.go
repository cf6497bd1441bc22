// Package apicheck guards fedecdf's public surface and its layering.
//
// Its tests compare the exported API of the public packages with a
// golden file and keep the layering rules.
//
// The public packages are those of the module outside internal/ and
// cmd/. TestAPI dumps, with go/types, every exported identifier of them
// — package-level constants, variables, functions and types, the
// exported fields and methods of exported types — one per line, as the
// Go project's api/ files do, and compares the dump with api/fedecdf.txt:
// an addition or change to the surface updates that file in the same
// commit (go test ./internal/apicheck -update), so that growth is a
// visible decision.
//
// TestNoInternalTypes fails on an exported identifier whose declared
// type mentions a type of an internal/ package (directly or through an
// alias), which another module cannot name.
//
// TestExamplesImportPublic checks that the examples of the public
// packages import no internal/ package. TestLayering checks that no package outside cmd/ imports
// runtime/debug (process policy belongs to the command) and that only
// cmd/, simulate and the harnesses themselves import the harnesses
// internal/bench and internal/experiment. TestLayersMatchTree checks
// that ARCHITECTURE.md's layer list names every package of the module
// and that every import points to the importer's line or below it.
// TestOutsideModule builds and runs a program of another module that
// imports only public packages: two embedded servers over loopback TCP,
// parties uploading to them and an analyst reading a private ECDF.
//
// TestVersionsTableMatchesCode reads ARCHITECTURE.md's table of
// versioned formats and checks each row against the code: its tests
// exist in its package, and the version constant or variable it names
// exists with the value the row gives (go/types; a variable computed as
// len of a literal, as store.SchemaVersion, is counted), and the info
// strings and labels it quotes are string literals of the code.
//
// TestFileLength keeps every non-test Go file of server, internal/vdcf
// and simulate under 600 lines: one role per file.
package apicheck
