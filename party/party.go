package party

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// Instance is one party's private record.
type Instance struct {
	Score float64 // binned on the public grid
	Label int     // 0 or 1
	// Probability is the predicted probability of label 1, in [0, 1],
	// used only when HasProbability is set (otherwise the Probability
	// component is 0).
	Probability    float64
	HasProbability bool
}

// Party is one validated instance, binned, with its report ID.
type Party struct {
	report  protocol.ReportID
	bin     int
	bins    int
	payload [protocol.NumComponents]uint64
}

// New validates inst against the grid g and draws a fresh report ID. A
// NaN or out-of-range score, a label other than 0 or 1 and a probability
// outside [0, 1] are errors naming the value.
func New(inst Instance, g *ecdf.Grid) (*Party, error) {
	bin, err := g.Bin(inst.Score)
	if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	if inst.Label != 0 && inst.Label != 1 {
		return nil, fmt.Errorf("label %d is not 0 or 1", inst.Label)
	}
	var prob uint64
	if inst.HasProbability {
		if !(inst.Probability >= 0 && inst.Probability <= 1) {
			return nil, fmt.Errorf("probability %v is not in [0, 1]", inst.Probability)
		}
		prob = uint64(math.Round(inst.Probability * protocol.ProbabilityScale))
	}
	id, err := protocol.NewID()
	if err != nil {
		return nil, err
	}
	y := uint64(inst.Label)
	return &Party{report: id, bin: bin, bins: g.Len(), payload: [protocol.NumComponents]uint64{1, y, 1 - y, prob}}, nil
}

// ReportID returns the party's report ID.
func (p *Party) ReportID() protocol.ReportID { return p.report }

// Bin returns the party's 1-based bin on the grid.
func (p *Party) Bin() int { return p.bin }

// Payload returns component c of the payload vector (in integer units:
// fixed point for Probability).
func (p *Party) Payload(c protocol.Component) uint64 { return p.payload[c] }

// Kernel returns payload_c·1[bin ≤ i] for every prefix i.
func (p *Party) Kernel(c protocol.Component, prefixes []int) []uint64 {
	k := make([]uint64, len(prefixes))
	for j, i := range prefixes {
		if p.bin <= i {
			k[j] = p.payload[c]
		}
	}
	return k
}

// AdditiveShares splits the kernel values of component c at prefixes into
// two additive shares mod 2^64: leader is uniform (read from rand,
// crypto/rand when nil) and leader + helper = Kernel(c, prefixes).
func (p *Party) AdditiveShares(c protocol.Component, prefixes []int, rand io.Reader) (leader, helper []uint64, err error) {
	if err := p.checkQuery(c, prefixes); err != nil {
		return nil, nil, err
	}
	if rand == nil {
		rand = cryptoReader
	}
	buf := make([]byte, 8*len(prefixes))
	if _, err := io.ReadFull(rand, buf); err != nil {
		return nil, nil, fmt.Errorf("drawing additive shares: %w", err)
	}
	helper = p.Kernel(c, prefixes)
	leader = make([]uint64, len(prefixes))
	for j := range leader {
		leader[j] = binary.LittleEndian.Uint64(buf[8*j:])
		helper[j] -= leader[j]
	}
	return leader, helper, nil
}

var cryptoReader = rand.Reader

// checkQuery validates a query batch against the party's grid.
func (p *Party) checkQuery(c protocol.Component, prefixes []int) error {
	if !c.Valid() {
		return fmt.Errorf("unknown payload component %d", c)
	}
	for j, i := range prefixes {
		if i < 1 || i > p.bins {
			return fmt.Errorf("prefix %d is not in [1, %d]", i, p.bins)
		}
		if j > 0 && i <= prefixes[j-1] {
			return fmt.Errorf("prefixes are not strictly increasing at position %d", j+1)
		}
	}
	return nil
}

// Servers is how a party reaches the two servers of one dataset.
type Servers struct {
	Conn           transport.Conn
	Leader, Helper transport.PeerID
	Dataset        string
}

// Enrol registers the party's report ID with both servers for the
// additive backend (an upload without a key): the servers agree on the
// enrolled set when a release is created.
func (p *Party) Enrol(ctx context.Context, s Servers) error {
	return p.upload(ctx, s, nil, nil)
}

// upload sends the leader's and the helper's report bodies.
func (p *Party) upload(ctx context.Context, s Servers, leaderKey, helperKey []byte) error {
	for _, to := range []struct {
		peer transport.PeerID
		key  []byte
	}{{s.Leader, leaderKey}, {s.Helper, helperKey}} {
		msg := &protocol.Upload{Dataset: s.Dataset, Report: p.report, Key: to.key}
		if _, err := protocol.Call[*protocol.Ack](ctx, s.Conn, to.peer, msg); err != nil {
			return fmt.Errorf("report %v: upload to %s: %w", p.report, to.peer, err)
		}
	}
	return nil
}

// SendShares answers an open additive query batch: one share vector to
// each server.
func (p *Party) SendShares(ctx context.Context, s Servers, q *protocol.OpenQuery) error {
	leader, helper, err := p.AdditiveShares(q.Component, q.Prefixes, nil)
	if err != nil {
		return fmt.Errorf("report %v: query %v: %w", p.report, q.Query, err)
	}
	for _, to := range []struct {
		peer   transport.PeerID
		shares []uint64
	}{{s.Leader, leader}, {s.Helper, helper}} {
		msg := &protocol.Shares{Dataset: s.Dataset, Query: q.Query, Report: p.report, Values: to.shares}
		if _, err := protocol.Call[*protocol.Ack](ctx, s.Conn, to.peer, msg); err != nil {
			return fmt.Errorf("report %v: shares to %s: %w", p.report, to.peer, err)
		}
	}
	return nil
}
