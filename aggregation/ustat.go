package aggregation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// UStat computes noisy prefix sums of the parties' payloads.
type UStat interface {
	// Backend is "plain", "additive" or "dcf".
	Backend() string
	// NewRelease fixes the secret noise of a new release and charges its
	// privacy cost to the dataset's budget (at every server).
	NewRelease(ctx context.Context, spec ReleaseSpec) (*Release, error)
	// Sum answers q with the release's noise.
	Sum(ctx context.Context, q Query) (*Result, error)
}

// ReleaseSpec describes a release: its noise mechanism (Bins must be the
// grid size) and the components it covers ([core.Count] when empty).
type ReleaseSpec struct {
	Mechanism  mechanism.Params
	Components []core.Component
}

// Normalize returns the spec a backend releases: its components sorted
// ([core.Count] when empty), each valid and listed once, and the mechanism
// named (tree when unnamed).
func (s ReleaseSpec) Normalize() (ReleaseSpec, error) {
	comps := slices.Clone(s.Components)
	if len(comps) == 0 {
		comps = []core.Component{core.Count}
	}
	slices.Sort(comps)
	for i, c := range comps {
		if !c.Valid() {
			return s, fmt.Errorf("aggregation: unknown payload component %d", c)
		}
		if i > 0 && c == comps[i-1] {
			return s, fmt.Errorf("aggregation: component %v listed twice", c)
		}
	}
	s.Components = comps
	if s.Mechanism.Name == "" {
		s.Mechanism.Name = "tree"
	}
	return s, nil
}

// Release is a fixed draw of secret noise over a fixed set of reports.
type Release struct {
	ID   core.ID
	Spec ReleaseSpec
	// Reports is n, the number of reports the release sums, when it is
	// public: under replace-one neighbours. Under add/remove n itself
	// tells D from D + x, so no backend tells the analyst (Reports is 0)
	// and curves are normalised by a noisy total instead (Normaliser).
	Reports int
	// Servers is the number of independent full-scale noise draws added
	// to each value: 1 for a trusted curator, 2 for two servers.
	Servers    int
	mechanisms map[core.Component]mechanism.Mechanism
	units      int // payload.PrivacyUnits of the components
}

// NewRelease returns release id of spec (normalised by
// ReleaseSpec.Normalize), summing reports reports with servers
// independent noise draws, as a backend hands it out: it builds the
// per-component mechanisms of spec and keeps reports only when public
// (Release.Reports). It draws no noise and charges no budget: that is
// the backend's UStat.NewRelease.
func NewRelease(id core.ID, spec ReleaseSpec, reports, servers int) (*Release, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	units, err := payload.PrivacyUnits(spec.Components)
	if err != nil {
		return nil, fmt.Errorf("aggregation: %w", err)
	}
	if spec.Mechanism.Relation != mechanism.ReplaceOne {
		reports = 0
	}
	r := &Release{ID: id, Spec: spec, Reports: reports, Servers: servers, mechanisms: make(map[core.Component]mechanism.Mechanism), units: units}
	for _, c := range spec.Components {
		m, err := payload.ComponentMechanism(spec.Mechanism, c)
		if err != nil {
			return nil, fmt.Errorf("aggregation: %w", err)
		}
		r.mechanisms[c] = m
	}
	return r, nil
}

// Normaliser returns the n the release's curves are divided by
// (ecdf.NewNormaliser): Reports under replace-one; under add/remove
// noisyTotal, a released total of this release — the Count prefix N, or
// the sum of the Label and NotLabel prefixes N — raised to 1 if below.
func (r *Release) Normaliser(noisyTotal int64) (ecdf.Normaliser, error) {
	return ecdf.NewNormaliser(r.Spec.Mechanism.Relation, int64(r.Reports), noisyTotal)
}

// Mechanism returns the mechanism whose noise component c receives (see
// payload.ComponentMechanism), or nil if the release does not cover c.
func (r *Release) Mechanism(c core.Component) mechanism.Mechanism { return r.mechanisms[c] }

// Epsilon and Delta return the privacy cost of the release: ε and δ of
// the spec once per privacy unit of its components (payload.
// PrivacyUnits: Count, the pair {Label, NotLabel} and Probability are one
// unit each, composed by basic composition).
func (r *Release) Epsilon() float64 {
	return float64(r.units) * r.Spec.Mechanism.Epsilon
}

// Delta: see Epsilon.
func (r *Release) Delta() float64 {
	return float64(r.units) * r.Spec.Mechanism.Delta
}

// variance returns the variance of the noise of prefix i of component c,
// in the component's units (probabilities for Probability):
// Servers × PrefixVariance(i) / scale².
func (r *Release) variance(c core.Component, i int) float64 { return r.RangeVariance(c, 0, i) }

// RangeVariance returns the variance of the noise of the range sum
// prefix(to) − prefix(from) of component c (from = 0: prefix to), in the
// component's units: Servers × mechanism.RangeVariance / scale².
func (r *Release) RangeVariance(c core.Component, from, to int) float64 {
	return float64(r.Servers) * mechanism.RangeVariance(r.mechanisms[c], from, to) / (c.Scale() * c.Scale())
}

// Query is one batch of prefix sums.
type Query struct {
	Release   *Release
	Component core.Component
	Prefixes  []int // strictly increasing, in [1, N]
}

// Sentinel errors of Query.Check, for callers to branch on with
// errors.Is; the error's text adds the details.
var (
	// ErrNotCovered: the query's component is not one of its release's.
	ErrNotCovered = errors.New("does not cover component")
	// ErrBadPrefixes: the query has no prefixes, or they are not
	// strictly increasing in [1, N].
	ErrBadPrefixes = errors.New("bad prefixes")
)

// Check returns an error unless q names a release that covers its
// component (else ErrNotCovered) and strictly increasing prefixes in
// [1, N] (else ErrBadPrefixes).
func (q Query) Check() error {
	if q.Release == nil {
		return errors.New("aggregation: query without a release")
	}
	if q.Release.mechanisms[q.Component] == nil {
		return fmt.Errorf("aggregation: release %v %w %v", q.Release.ID, ErrNotCovered, q.Component)
	}
	if len(q.Prefixes) == 0 {
		return fmt.Errorf("aggregation: %w: query without prefixes", ErrBadPrefixes)
	}
	bins := q.Release.Spec.Mechanism.Bins
	for j, i := range q.Prefixes {
		if i < 1 || i > bins {
			return fmt.Errorf("aggregation: %w: prefix %d is not in [1, %d]", ErrBadPrefixes, i, bins)
		}
		if j > 0 && i <= q.Prefixes[j-1] {
			return fmt.Errorf("aggregation: %w: prefixes are not strictly increasing at position %d (%d after %d)", ErrBadPrefixes, j+1, i, q.Prefixes[j-1])
		}
	}
	return nil
}

// Result is the answer to a Query.
type Result struct {
	Query
	// Sums are the noisy prefix sums Σ payload_c·1[bin ≤ i] + η(i), in
	// integer units (fixed point with scale payload.ProbabilityScale for
	// Probability).
	Sums []int64
}

// Value returns Sums[j] in the component's units.
func (r *Result) Value(j int) float64 { return float64(r.Sums[j]) / r.Component.Scale() }

// Variance returns the noise variance of Value(j).
func (r *Result) Variance(j int) float64 { return r.Release.variance(r.Component, r.Prefixes[j]) }
