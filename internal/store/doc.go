// Package store is a server's durable state in an embedded bbolt file:
// the reports it accepted (the encoded uploads, keyed by dataset and
// report ID) and its privacy-budget ledger (server.Ledger: per dataset,
// the ε and δ spent and the IDs of the releases charged).
//
// A server writes a report here before acknowledging it, and a release's
// cost before answering it, so nothing acknowledged is lost on a crash
// (DESIGN.md, "Deployment"); on restart the reports are replayed into a
// fresh server and the ledger continues where it stopped. The ledger
// follows basic composition over releases, as server.MemoryLedger:
// every release of a dataset adds its (ε, δ), and a release beyond the
// dataset's total is refused with nothing recorded.
package store
