package core

import "encoding/hex"

// ID is a random 16-byte identifier of a report, a release or a query.
type ID [16]byte

// String returns the hexadecimal form of the ID.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether id is all zeros.
func (id ID) IsZero() bool { return id == ID{} }
