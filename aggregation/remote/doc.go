// Package remote is the analyst's client of a two-server deployment.
//
// A [Client] is an aggregation.UStat over the additive or dcf
// secure-sum backend (dp-ecdf §4.1–4.2). It talks to the leader only,
// over any [core.Conn] (in process for internal/testbed, libp2p for
// deploy, another module's own transport); with the additive backend it
// also has the parties send their shares for every query batch
// (Participants).
//
// It imports aggregation, core, internal/payload, internal/protocol,
// internal/transport and server (the backend names); never party.
package remote
