package mechanism

import (
	"errors"
	"fmt"
	"math"
)

// Relation is the neighbouring relation under which a mechanism is
// differentially private.
type Relation int

const (
	// ReplaceOne: two data sets of the same public size n are neighbours
	// when they differ in the value of exactly one instance (the relation
	// of dp-ecdf §2; n is public). This is the default.
	ReplaceOne Relation = iota
	// AddRemove: two data sets are neighbours when one is the other with
	// one instance added (the relation of count-on-your-elders).
	AddRemove
)

// String returns "replace" or "addremove", the names used on the command line.
func (r Relation) String() string {
	switch r {
	case ReplaceOne:
		return "replace"
	case AddRemove:
		return "addremove"
	}
	return fmt.Sprintf("Relation(%d)", int(r))
}

// ParseRelation parses "replace" or "addremove".
// Its error is the bare phrase, for the caller to prefix with the flag
// or field it parsed ("--neighbours: ..."): it has no package prefix.
func ParseRelation(s string) (Relation, error) {
	switch s {
	case "replace", "replace-one", "":
		return ReplaceOne, nil
	case "addremove", "add-remove":
		return AddRemove, nil
	}
	return 0, fmt.Errorf("unknown neighbouring relation %q (want replace or addremove)", s)
}

// Term is one noise variable used by a prefix: the prefix noise is
// Σ Coef·η_Node over its terms, the η_Node independent with variance
// NodeVariance(). Tree and k-ary mechanisms have Coef = ±1; the
// partitioned one ±√(V_j/V_1) on part j's nodes (V_j their own variance).
type Term struct {
	Node int
	Coef float64
}

// Mechanism is a data-independent, linearly structured noise pattern over
// the N prefix counts c_1 ≤ … ≤ c_N (c_i = number of instances in bins
// 1..i, or a payload sum). Prefixes are numbered 1..N.
type Mechanism interface {
	// Name is the mechanism's command-line name with its parameters,
	// e.g. "tree", "kary(k=17)", "cascade".
	Name() string
	// Bins is N, the number of prefixes answered.
	Bins() int
	// Epsilon and Delta are the privacy parameters of one release.
	Epsilon() float64
	Delta() float64
	// Relation is the neighbouring relation the guarantee holds under.
	Relation() Relation
	// PrefixVariance is the exact variance, in integer units² (counts²
	// when Params.Unit is 1), of the noise added to prefix i (1 ≤ i ≤ N)
	// by one release.
	PrefixVariance(i int) float64
	// MeanVariance is the exact mean of PrefixVariance over i = 1..N.
	MeanVariance() float64
	// Nodes is the number of noise variables; Terms appends the terms of
	// prefix i to dst. NodeVariance is the variance of each variable.
	Nodes() int
	Terms(i int, dst []Term) []Term
	NodeVariance() float64
	// NewRelease fixes the secret noise of one release: it draws every
	// node noise the release can ever use, each from its own stream
	// noise.Seed(seed).Stream(domain, node), before returning. Equal
	// seeds give equal noise.
	NewRelease(seed [32]byte) Release
}

// Release is one draw of a mechanism's secret noise. Asking the same
// prefix again returns the same value, so re-querying costs no budget.
//
// All the noise is drawn when the release is created (NewRelease), by
// the variable-time rejection samplers of package noise; PrefixNoise
// only adds up stored node values, reads no randomness and takes the
// same few additions whatever the noise is, so the time of a server's
// answers does not depend on the noise; creation computes the same
// number of random words per node whatever the noise, except with
// probability at most 2^−40 per node, a derived bound ("Fixed work at
// release creation", nodes.go).
// A Release is safe for concurrent use.
type Release interface {
	// PrefixNoise is the integer noise added to prefix count i (1 ≤ i ≤ N).
	PrefixNoise(i int) int64
}

// Params selects and configures a mechanism. Name is one of "tree",
// "kary", "cascade", "gaussian-tree", "auto", "partitioned" (see New); K is the arity
// of "kary" (0 picks the best); Delta is used by approximate (ε,δ)
// mechanisms only.
type Params struct {
	Name     string
	Bins     int
	Epsilon  float64
	Delta    float64
	K        int
	Relation Relation
	// Unit is the number of integer units per unit of one record's
	// contribution: 0 or 1 for counts, 2^32 for fixed-point
	// probabilities (payload.ProbabilityScale). Every node's Laplace
	// scale and every Gaussian σ is multiplied by Unit (σ² by Unit²),
	// while ε, δ and the sensitivity Δ stay those of one record: the
	// noise is calibrated by an explicit sensitivity Unit·Δ, never by
	// rescaling ε, which is right for the Gaussian and ℓ2 mechanisms too
	// (their noise does not scale like 1/ε). PrefixVariance, MeanVariance
	// and NodeVariance are in integer units (Unit² times those of counts).
	// Unit is not part of a release's wire encoding: the protocol sets it
	// per payload component.
	Unit uint64
}

// unit returns Params.Unit, with 0 meaning 1.
func (p Params) unit() uint64 { return max(p.Unit, 1) }

// maxPrefixStdDev is the largest standard deviation, in integer units,
// of the noise any mechanism adds to one prefix: 2^50. Constructors
// refuse a larger one with ErrNoiseTooLarge.
//
// Why 2^50. Shares and sums live in uint64 modulo 2^64 and are decoded
// as int64; payload sums of n ≤ 2^30 records of at most 2^32 units each
// lie in [0, 2^62], so a released sum decodes exactly when its noise η
// has |η| < 2^62. Every prefix noise is either a sum of k ≤ 2^20
// independent discrete Laplace terms (tree, kary) or a linear
// combination of independent discrete Gaussians, each σ²-sub-Gaussian
// (CKS20), plus a rounding error below 1/2 (gaussian-tree, cascade).
// With Var(η) ≤ 2^100: a discrete Laplace Lap_Z(b) has E[e^{X/(2b)}] ≤
// 4/3, and its variance is about 2b², so for k terms of scale b ≤
// 2^50/√(2k), Chernoff's bound gives P(|η| ≥ 2^62) ≤ 2·(4/3)^k·e^{−2^62/(2b)}
// ≤ 2·e^{0.29k − 2^11·√(2k)} < e^{−2000}; for the Gaussian ones
// P(|η| ≥ 2^62 − 1) ≤ 2e^{−2^123/2^100} = 2e^{−2^23}. So a wrap-around
// of the share domain has negligible probability, and the noise of a
// fixed-point probability (2^32 units per record) can still reach a
// standard deviation of 2^18 records.
const maxPrefixStdDev = 1 << 50

// ErrNoiseTooLarge is returned (wrapped) by every constructor whose
// prefix noise would exceed maxPrefixStdDev: the noise would not fit the
// 64-bit share domain. Use a larger ε (or δ), fewer bins or a smaller
// Unit.
var ErrNoiseTooLarge = errors.New("noise too large for the 64-bit share domain")

// checkNoise refuses a mechanism with parameters p whose largest prefix
// variance (an upper bound of it) exceeds maxPrefixStdDev².
func checkNoise(mech string, p Params, maxVariance float64) error {
	if maxVariance > float64(maxPrefixStdDev)*float64(maxPrefixStdDev) || math.IsNaN(maxVariance) {
		return fmt.Errorf("%s: epsilon %v, delta %v, %d bins, unit %d: prefix noise standard deviation %.3g units is above 2^50: %w; use a larger ε (or δ), fewer bins or a smaller unit",
			mech, p.Epsilon, p.Delta, p.Bins, p.unit(), math.Sqrt(maxVariance), ErrNoiseTooLarge)
	}
	return nil
}
