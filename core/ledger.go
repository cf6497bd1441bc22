package core

import "github.com/fedecdf/fedecdf/ecdf/mechanism"

// Ledger records, per dataset, the privacy budget spent by releases. A
// release is charged once, when it is created; charging the same release
// again is a no-op, so re-querying a release is free (its noise is fixed).
// Implementations must make a charge durable before returning nil.
type Ledger interface {
	// Charge adds cost to the spending of dataset for release if the
	// budget rule admits it (a release already on the ledger costs
	// nothing; a new one must keep the spending within total), and
	// otherwise fails, with nothing recorded.
	Charge(dataset string, release ID, cost, total mechanism.Budget) error
	// Spent returns what dataset has spent so far.
	Spent(dataset string) (mechanism.Budget, error)
	// Charged reports whether release is already on dataset's ledger (a
	// retry of a release whose charge outlived a crash costs nothing).
	Charged(dataset string, release ID) (bool, error)
	// Releases returns the number of releases on dataset's ledger.
	// Nothing is ever refunded, so it only grows: a ledger holding fewer
	// releases than it did (or than its peer server's) went back in
	// time, its store restored from an older backup.
	Releases(dataset string) (uint64, error)
}
