// Package core names what parties, servers and analysts exchange.
//
// It holds the types the public packages' signatures share, so that a
// program of another module can name them: the components of a party's
// payload vector ([Component]: 1, y, 1 − y and round(p·2^32)), the random
// 16-byte identifiers of reports and releases ([ID]), the seam between
// the protocol logic and a network ([PeerID], [Conn]) and the record of
// the privacy budget a dataset spent ([Ledger]).
//
// It imports only ecdf/mechanism (for [mechanism.Budget]), so that the
// project's internal packages build on it without an upward import.
package core
