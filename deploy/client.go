package deploy

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// Party is a party's (or a batch of parties') host: it dials the two
// servers of the manifest and nothing else.
type Party struct {
	m    *Manifest
	grid *ecdf.Grid
	host *p2p.Host
}

// NewParty starts a dial-only host with key (a fresh Ed25519 key when
// nil: parties are anonymous to the servers). tc sets timeouts and
// retries; its Key, Peers and Listen are set here.
func NewParty(m *Manifest, key crypto.PrivKey, tc p2p.Config) (*Party, error) {
	g, err := m.NewGrid()
	if err != nil {
		return nil, fmt.Errorf("manifest grid: %w", err)
	}
	book, err := m.book(false)
	if err != nil {
		return nil, err
	}
	if key == nil {
		id, err := NewIdentity()
		if err != nil {
			return nil, err
		}
		key = id.Key
	}
	tc.Key, tc.Peers, tc.Listen = key, book, nil
	h, err := p2p.New(tc)
	if err != nil {
		return nil, err
	}
	return &Party{m: m, grid: g, host: h}, nil
}

// Close stops the host.
func (p *Party) Close() error { return p.host.Close() }

// Report is one party's prepared report: its ID and the upload to each
// server. Sending it again (a retry after a lost acknowledgement) is
// safe: the servers drop the duplicate.
type Report struct {
	ID             protocol.ReportID
	Leader, Helper *protocol.Upload
}

// NewReport validates inst against the manifest's grid, draws a report
// ID and the DCF key pair of its bin and payload (dp-ecdf §4.2).
func (p *Party) NewReport(inst party.Instance) (*Report, error) {
	pt, err := party.New(inst, p.grid)
	if err != nil {
		return nil, err
	}
	lk, hk, err := pt.DCFKeys(nil)
	if err != nil {
		return nil, err
	}
	id := pt.ReportID()
	return &Report{
		ID:     id,
		Leader: &protocol.Upload{Dataset: p.m.Dataset, Report: id, Key: lk},
		Helper: &protocol.Upload{Dataset: p.m.Dataset, Report: id, Key: hk},
	}, nil
}

// Send uploads r to both servers (direct upload mode) and returns once
// both have made it durable; dup reports whether a server already held it.
func (p *Party) Send(ctx context.Context, r *Report) (dup bool, err error) {
	conn := p.host.Conn(p2p.ReportProtocol)
	for _, to := range []struct {
		peer transport.PeerID
		up   *protocol.Upload
	}{{LeaderName, r.Leader}, {HelperName, r.Helper}} {
		ack, err := protocol.Call[*protocol.Ack](ctx, conn, to.peer, to.up)
		if err != nil {
			return false, fmt.Errorf("report %v: upload to the %s: %w", r.ID, to.peer, err)
		}
		dup = dup || ack.Duplicate
	}
	return dup, nil
}

// Submit prepares and sends the report of one instance.
func (p *Party) Submit(ctx context.Context, inst party.Instance) (protocol.ReportID, error) {
	r, err := p.NewReport(inst)
	if err != nil {
		return protocol.ReportID{}, err
	}
	_, err = p.Send(ctx, r)
	return r.ID, err
}

// Analyst is the analyst's host and its client of the leader.
type Analyst struct {
	m      *Manifest
	grid   *ecdf.Grid
	host   *p2p.Host
	remote *aggregation.Remote
}

// NewAnalyst starts the analyst's dial-only host; its peer ID must be
// one of the manifest's analysts (the leader refuses any other).
func NewAnalyst(m *Manifest, id *Identity, tc p2p.Config) (*Analyst, error) {
	if !contains(m.Analysts, id.PeerID.String()) {
		return nil, fmt.Errorf("the key's peer ID %s is not an analyst of the manifest", id.PeerID)
	}
	g, err := m.NewGrid()
	if err != nil {
		return nil, fmt.Errorf("manifest grid: %w", err)
	}
	book, err := m.book(false)
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
	remote, err := aggregation.NewRemote(server.DCF, h.Conn(p2p.QueryProtocol), LeaderName, m.Dataset, nil)
	if err != nil {
		h.Close()
		return nil, err
	}
	return &Analyst{m: m, grid: g, host: h, remote: remote}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Close stops the host.
func (a *Analyst) Close() error { return a.host.Close() }

// ECDF is a private ECDF released by the two servers: every field is
// public configuration or post-processing of one release.
type ECDF struct {
	Dataset    string             `json:"dataset"`
	N          int                `json:"n"` // reports summed (public under replace-one)
	Epsilon    float64            `json:"epsilon"`
	Delta      float64            `json:"delta"`
	Mechanism  string             `json:"mechanism"`
	Relation   string             `json:"relation"`
	Guarantee  string             `json:"guarantee"`
	Release    string             `json:"release"`
	StdDev     float64            `json:"stddev"` // root mean noise s.d. of F̂, both servers' noise
	Thresholds []float64          `json:"thresholds"`
	Counts     []int64            `json:"counts"` // noisy prefix counts
	ECDF       []float64          `json:"ecdf"`   // Counts / N, not clipped
	Quantiles  map[string]float64 `json:"quantiles,omitempty"`
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
	n := a.grid.Len()
	prefixes := make([]int, n)
	for i := range prefixes {
		prefixes[i] = i + 1
	}
	res, err := a.remote.Sum(ctx, aggregation.Query{Release: rel, Component: aggregation.Count, Prefixes: prefixes})
	if err != nil {
		return nil, err
	}
	out := &ECDF{
		Dataset: a.m.Dataset, N: rel.Reports, Epsilon: rel.Epsilon(), Delta: rel.Delta(),
		Mechanism: rel.Mechanism(aggregation.Count).Name(), Relation: params.Relation.String(),
		Guarantee: rel.Guarantee(), Release: rel.ID.String(), Thresholds: a.grid.Thresholds(), Counts: res.Sums,
	}
	var sumVar float64
	for j, c := range res.Sums {
		out.ECDF = append(out.ECDF, float64(c)/float64(rel.Reports))
		sumVar += res.Variance(j)
	}
	out.StdDev = math.Sqrt(sumVar/float64(n)) / float64(rel.Reports)
	return out, nil
}

// AddQuantiles reads the p-quantiles of the private curve (dp-ecdf
// Algorithm 1; post-processing, no budget).
func (e *ECDF) AddQuantiles(g *ecdf.Grid, ps []float64) error {
	qs, err := ecdf.Quantiles(ecdf.CurveAt(e.ECDF), g, ps)
	if err != nil {
		return err
	}
	e.Quantiles = make(map[string]float64, len(ps))
	for j, p := range ps {
		e.Quantiles[strconv.FormatFloat(p, 'g', -1, 64)] = qs[j]
	}
	return nil
}

// Grid returns the manifest's grid.
func (a *Analyst) Grid() *ecdf.Grid { return a.grid }
