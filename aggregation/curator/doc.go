// Package curator is the trusted-curator backend of aggregation.UStat.
//
// This plain backend holds every party's bin and payload, sums them in
// the clear and adds one full-scale draw of the release's noise
// (Release.Servers = 1), charging each release to a ledger within the
// dataset's budget. It is the reference the two-server backends match
// exactly when the noise is off, and the UStat of the experiments and
// of `fedecdf ecdf`.
//
// It imports aggregation, ecdf/mechanism, ecdf/noise, internal/payload,
// party (the instances) and server (the budget ledger); nothing imports
// it but commands, experiments, simulations and tests.
package curator
