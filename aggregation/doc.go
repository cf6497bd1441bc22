// Package aggregation is the UStat operation of dp-ecdf §2: compute and
// publish
//
//	Û_φ(X, I) = U_φ(X) + Σ_{i∈I} η_i
//
// for the kernels φ_i(x) = payload_c(x)·1[bin(x) ≤ i] of Eq. (4), in
// batch form: a [Query] names a payload component c (count, label,
// 1 − label, or fixed-point probability), a sorted list of prefixes
// i ∈ [1, N], and a [Release], whose secret noise η(i) (the noise pattern
// of an ecdf/mechanism, e.g. the tree path of Eq. 2) is added to prefix
// i. The sums are returned unnormalised, in the component's integer
// units; dividing by n gives the U-statistic. Under the replace-one
// relation n is public (Release.Reports); under add/remove no backend
// tells it — adding one record changes it — and the analyst divides by a
// released noisy total instead (Release.Normaliser: the [core.Count] prefix N,
// or the {Label, [core.NotLabel]} prefixes N together).
//
// A release fixes its noise once, when it is created, and charges its
// privacy budget then: ε (and δ) per privacy unit of the components it
// covers (payload.PrivacyUnits: Count, the {Label, NotLabel} pair and
// [core.Probability] are one unit each), under the mechanism's neighbouring
// relation (replace-one by default, n public), which the servers'
// policy requires to be the dataset's.
// Every later query of the release reuses the same noise and the same
// set of reports, so re-querying a prefix, or binary-searching the
// inverse ECDF (Algorithm 1), costs nothing more.
//
// Backends implement [UStat] in subpackages:
//
//   - curator: a trusted curator that sees every instance and adds the
//     mechanism's noise once; the reference every other backend matches
//     exactly when the noise is off.
//   - remote: the analyst's client of the two servers, with the additive
//     backend (each party uploads once a verified Prio3 histogram of its
//     bin and label, internal/verify; the servers verify it between
//     themselves, aggregate the accepted ones and answer any number of
//     queries alone, in the field of Prio3; no probability component) or
//     the dcf backend (§4.2: each party
//     uploads once a pair of distributed-comparison-function keys for its
//     bin and payload vector, package fss; the servers then answer any
//     number of queries alone; communication O(n + m·|B|) after the
//     upload).
//   - local: parties, two servers and an analyst in one process over the
//     in-process transport, counting bytes and round trips (the testbed
//     of simulate and the tests).
//
// With two servers, each draws its own noise seed per release (crypto/
// rand) at the mechanism's full scale and adds its noise to its share:
// the output stays (ε, δ)-DP even if one server is corrupt and removes
// its own noise, at twice the mechanism's variance. Result.Variance and
// analysis.Guarantee state this.
//
// # Layering
//
// This package holds only the interface and its value types (Release,
// [ReleaseSpec], Query, [Result]); it imports ecdf, ecdf/mechanism and
// internal/payload, never a party, a server or the transport, so that
// the statistics built on it (roc, hosmer) stay free of them. The
// backends import it, never the reverse.
package aggregation
