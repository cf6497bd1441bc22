// Package remote is the analyst's client of a two-server deployment.
//
// A [Client] is an aggregation.UStat over the additive or dcf
// secure-sum backend (dp-ecdf §4.1–4.2). It talks to the leader only,
// over any internal/transport connection (in process for
// aggregation/local, libp2p for deploy); with the additive backend it
// also has the parties send their shares for every query batch
// (Participants).
//
// It imports aggregation, internal/payload, internal/protocol,
// internal/transport and server (the backend names); never party.
package remote
