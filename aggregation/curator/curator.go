package curator

import (
	"context"
	"fmt"
	"sync"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// Curator is the trusted-curator backend: it holds every party's bin and
// payload, and adds one full-scale draw of the mechanism's noise.
type Curator struct {
	dataset string
	bins    int
	budget  ledger.Budget
	ledger  core.Ledger
	prefix  [payload.NumComponents][]uint64 // prefix[c][i−1] = Σ payload_c·1[bin ≤ i]
	reports int
	mu      sync.Mutex
	noise   map[core.ID]map[core.Component]mechanism.Release
}

// New returns a curator over the parties' instances on a grid of bins
// bins, charging releases of dataset to the ledger l (a new ledger in
// memory if l is nil) within budget.
func New(dataset string, bins int, parties []*party.Party, budget mechanism.Budget, l core.Ledger) (*Curator, error) {
	if l == nil {
		l = ledger.NewMemory()
	}
	p := &Curator{dataset: dataset, bins: bins, budget: budget, ledger: l, reports: len(parties), noise: make(map[core.ID]map[core.Component]mechanism.Release)}
	for c := range p.prefix {
		p.prefix[c] = make([]uint64, bins)
	}
	for k, q := range parties {
		if q.Bin() < 1 || q.Bin() > bins {
			return nil, fmt.Errorf("curator: party %d (report %v): bin %d is not in [1, %d]", k, q.ReportID(), q.Bin(), bins)
		}
		for c := range p.prefix {
			p.prefix[c][q.Bin()-1] += q.Payload(core.Component(c))
		}
	}
	for c := range p.prefix {
		for i := 1; i < bins; i++ {
			p.prefix[c][i] += p.prefix[c][i-1]
		}
	}
	return p, nil
}

// Backend returns "plain".
func (p *Curator) Backend() string { return "plain" }

// NewRelease implements aggregation.UStat.
func (p *Curator) NewRelease(_ context.Context, spec aggregation.ReleaseSpec) (*aggregation.Release, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, fmt.Errorf("curator: %w", err)
	}
	if spec.Mechanism.Bins != p.bins {
		return nil, fmt.Errorf("curator: mechanism over %d bins, but the grid has %d", spec.Mechanism.Bins, p.bins)
	}
	id, err := payload.NewID()
	if err != nil {
		return nil, fmt.Errorf("curator: %w", err)
	}
	rel, err := aggregation.NewRelease(id, spec, p.reports, 1)
	if err != nil {
		return nil, fmt.Errorf("curator: %w", err)
	}
	seed, err := noise.NewSeed()
	if err != nil {
		return nil, fmt.Errorf("curator: %w", err)
	}
	cost := ledger.Budget{Epsilon: rel.Epsilon(), Delta: rel.Delta()}
	if err := p.ledger.Charge(p.dataset, id, cost, p.budget); err != nil {
		return nil, fmt.Errorf("curator: release refused: %w", err)
	}
	noise := make(map[core.Component]mechanism.Release)
	for _, c := range spec.Components {
		noise[c] = rel.Mechanism(c).NewRelease(payload.ComponentSeed(seed, c))
	}
	p.mu.Lock()
	p.noise[id] = noise
	p.mu.Unlock()
	return rel, nil
}

// Sum implements aggregation.UStat.
func (p *Curator) Sum(_ context.Context, q aggregation.Query) (*aggregation.Result, error) {
	if err := q.Check(); err != nil {
		return nil, fmt.Errorf("curator: %w", err)
	}
	p.mu.Lock()
	rel, ok := p.noise[q.Release.ID]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("curator: unknown release %v", q.Release.ID)
	}
	sums := make([]int64, len(q.Prefixes))
	for j, i := range q.Prefixes {
		sums[j] = int64(p.prefix[q.Component][i-1] + uint64(rel[q.Component].PrefixNoise(i)))
	}
	return &aggregation.Result{Query: q, Sums: sums}, nil
}
