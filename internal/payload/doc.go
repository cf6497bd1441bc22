// Package payload is the vocabulary below the secure sum.
//
// Parties, servers, the UStat backends and the analysis packages share
// it: the components of a party's payload vector (1, y, 1−y,
// round(p·2^32)), the noise mechanism and seed of each component
// (ComponentMechanism, ComponentSeed), the privacy cost of a release of
// several components (PrivacyUnits), and the random 16-byte identifiers
// of reports, releases and query batches. The component and identifier
// types are core's (Component, ID), aliased here, so that the public
// packages' signatures name a type another module can name too.
//
// It imports only core, ecdf/mechanism and ecdf/noise, so that package
// aggregation — the UStat interface that roc and hosmer use — can name
// components and releases without the wire format and the transport of
// package internal/protocol, which builds its messages on this package.
//
// # Stability
//
// The seed derivation (ComponentSeed) and the per-component calibration
// (ComponentMechanism) fix the noise of every release: together with the
// mechanisms' known-answer tests and server's
// TestReleaseRecordKnownAnswer they are a stability contract.
package payload
