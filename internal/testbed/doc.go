// Package testbed deploys parties, two servers and an analyst in one
// process.
//
// They talk over the in-process transport, which counts bytes and round
// trips ([Deployment.Cost]): the testbed of package simulate and of the
// tests of every backend. Its [Deployment] is an aggregation.UStat —
// the curator for the plain backend, the remote client of the two
// servers otherwise — that refuses a release under another neighbouring
// relation than the dataset's (Config.Policy.Relation).
//
// It imports the backends (aggregation/curator, aggregation/remote) and
// what they run on: party, server, internal/protocol and
// internal/transport. Only commands, simulations and tests import it.
package testbed
