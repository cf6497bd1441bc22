package mechanism

import "fmt"

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
// NodeVariance(). Tree and k-ary mechanisms have Coef = ±1.
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
	// PrefixVariance is the exact variance, in counts², of the noise
	// added to prefix i (1 ≤ i ≤ N) by one release.
	PrefixVariance(i int) float64
	// MeanVariance is the exact mean of PrefixVariance over i = 1..N.
	MeanVariance() float64
	// Nodes is the number of noise variables; Terms appends the terms of
	// prefix i to dst. NodeVariance is the variance of each variable.
	Nodes() int
	Terms(i int, dst []Term) []Term
	NodeVariance() float64
	// NewRelease fixes the secret noise of one release, derived lazily
	// from seed (see package noise): equal seeds give equal noise.
	NewRelease(seed [32]byte) Release
}

// Release is one draw of a mechanism's secret noise. Asking the same
// prefix again returns the same value, so re-querying costs no budget.
type Release interface {
	// PrefixNoise is the integer noise added to prefix count i (1 ≤ i ≤ N).
	PrefixNoise(i int) int64
}

// Params selects and configures a mechanism. Name is one of "tree",
// "kary", "cascade", "auto" (see New); K is the arity of "kary" (0 picks
// the best); Delta is used by approximate (ε,δ) mechanisms only.
type Params struct {
	Name     string
	Bins     int
	Epsilon  float64
	Delta    float64
	K        int
	Relation Relation
}
