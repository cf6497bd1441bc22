package analyst

// Analyst queries: an analyst's host (Analyst) creates and reads the
// releases of a deployment, the ECDF here and the ROC and Hosmer–Lemeshow
// releases in roc.go and hosmer.go.

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

// Analyst is the analyst's host and its client of the leader.
type Analyst struct {
	m      *manifest.Manifest
	grid   *ecdf.Grid
	host   *p2p.Host
	remote *remote.Client
	// draws is the number of Monte-Carlo draws behind the intervals of
	// the results (SetIntervalDraws).
	draws int
	// first is the host reaching the leader process asked first, and
	// failover its connection, of an analyst made by NewAnalystAt (nil
	// otherwise).
	first    *p2p.Host
	failover *failover
}

// NewAnalyst starts the analyst's dial-only host; its peer ID must be
// one of the manifest's analysts (the leader refuses any other).
func NewAnalyst(m *manifest.Manifest, id *manifest.Identity, tc p2p.Config) (*Analyst, error) {
	if !contains(m.Analysts, id.PeerID.String()) {
		return nil, fmt.Errorf("the key's peer ID %s %w", id.PeerID, ErrNotAnalyst)
	}
	g, err := m.NewGrid()
	if err != nil {
		return nil, fmt.Errorf("manifest grid: %w", err)
	}
	book, err := m.Book(false)
	if err != nil {
		return nil, err
	}
	tc.Key, tc.Peers, tc.Listen = id.Key, book, nil
	if tc.MaxMessage == 0 {
		tc.MaxMessage = protocol.MaxMessageSize
	}
	h, err := p2p.New(tc)
	if err != nil {
		return nil, err
	}
	client, err := remote.New(server.Backend(m.Backend), h.Conn(p2p.QueryProtocol), manifest.LeaderName, m.Dataset)
	if err != nil {
		h.Close()
		return nil, err
	}
	return &Analyst{m: m, grid: g, host: h, remote: client, draws: analysis.DefaultIntervalDraws}, nil
}

// SetIntervalDraws sets the number B of Monte-Carlo draws of the noise
// law behind the intervals of the ECDF and ROC results (0: none; the
// default is analysis.DefaultIntervalDraws).
func (a *Analyst) SetIntervalDraws(draws int) { a.draws = draws }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Close stops the host.
func (a *Analyst) Close() error {
	if a.first != nil {
		a.first.Close()
	}
	return a.host.Close()
}

// Remote is the analyst's client of the leader, which may ask for any
// release: the servers, not this package, enforce the manifest's policy.
func (a *Analyst) Remote() *remote.Client { return a.remote }

// Stored names the release behind a result over the network: every
// field is public.
type Stored struct {
	Dataset string `json:"dataset"`
	// Release is the release's ID: give it to Analyst.ReadRelease or
	// ROCRelease (fedecdf query --release) to read the same noisy result
	// again for free.
	Release string `json:"release"`
	// Charged is true when this query created the release and spent its
	// ε, δ; false for a re-read of an existing release.
	Charged bool `json:"charged"`
}

// stored names release id of the manifest's dataset.
func (a *Analyst) stored(id payload.ReleaseID) Stored {
	return Stored{Dataset: a.m.Dataset, Release: id.String()}
}

// ECDF is a private ECDF released by the two servers (analysis.ECDF),
// with the release it came from.
type ECDF struct {
	Stored
	*analysis.ECDF
}

// ECDF creates a release of the Count component (charging the manifest's
// ε, δ at both servers) and reads all N noisy prefix counts.
func (a *Analyst) ECDF(ctx context.Context) (*ECDF, error) {
	params, err := a.m.MechanismParams()
	if err != nil {
		return nil, err
	}
	rel, err := a.remote.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: params})
	if err != nil {
		return nil, err
	}
	e, err := a.read(ctx, rel)
	if err != nil {
		return nil, err
	}
	e.Charged = true
	return e, nil
}

// ReadRelease reads all N noisy prefix counts of an existing release
// again: the servers answer with the release's fixed noise, so this costs
// no budget and returns the curve first read. The stated guarantee, s.d.
// and smoothing follow the mechanism the servers recorded for the
// release, whatever the manifest now says.
func (a *Analyst) ReadRelease(ctx context.Context, id payload.ReleaseID) (*ECDF, error) {
	rel, err := a.remote.OpenRelease(ctx, id, []core.Component{core.Count})
	if err != nil {
		return nil, err
	}
	return a.read(ctx, rel)
}

// ParseReleaseID parses the hexadecimal release ID that ECDF.Release
// prints.
func ParseReleaseID(s string) (payload.ReleaseID, error) {
	var id payload.ReleaseID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("release ID %q is not %d hexadecimal bytes", s, len(id))
	}
	copy(id[:], b)
	return id, nil
}

// read queries every prefix of the Count component of release rel.
func (a *Analyst) read(ctx context.Context, rel *aggregation.Release) (*ECDF, error) {
	e, err := analysis.QueryECDF(ctx, a.remote, rel, a.grid, analysis.AllPrefixes(a.grid.Len()), a.draws)
	if err != nil {
		return nil, fmt.Errorf("release %v: %w", rel.ID, err)
	}
	return &ECDF{Stored: a.stored(rel.ID), ECDF: e}, nil
}
