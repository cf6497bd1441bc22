// Package ledger is the privacy-budget accounting of a dataset.
//
// It holds Budget, an amount (ε, δ); Admit, the one rule by which a
// release is charged (basic composition over releases; a release
// already charged is free, so re-querying a fixed noise costs nothing);
// and Ledger (core.Ledger, aliased), the record of what each dataset
// spent, in memory (Memory) or in a JSON file (File). Package internal/store keeps a durable
// Ledger in its bbolt file.
//
// The servers charge every release to a Ledger before acknowledging it
// (package server), and so does the trusted curator
// (aggregation/curator). It imports only core, ecdf/mechanism,
// internal/errcode and internal/payload (release IDs), so that both, and
// the store, can share it without importing one another.
package ledger
