package party

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"golang.org/x/crypto/chacha20"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/payload"
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
	report  payload.ReportID
	seed    [32]byte // keys the leader's additive shares (leaderShares)
	bin     int
	bins    int
	payload [payload.NumComponents]uint64
}

// New validates inst against the grid g and draws a fresh report ID. A
// NaN or out-of-range score, a label other than 0 or 1 and a probability
// outside [0, 1] are errors naming the value that match
// ErrInvalidInstance.
func New(inst Instance, g *ecdf.Grid) (*Party, error) {
	bin, prob, err := check(inst, g)
	if err != nil {
		return nil, fmt.Errorf("party: %w: %w", ErrInvalidInstance, err)
	}
	id, err := payload.NewID()
	if err != nil {
		return nil, fmt.Errorf("party: %w", err)
	}
	y := uint64(inst.Label)
	p := &Party{report: id, bin: bin, bins: g.Len(), payload: [payload.NumComponents]uint64{1, y, 1 - y, prob}}
	if _, err := rand.Read(p.seed[:]); err != nil {
		return nil, fmt.Errorf("party: drawing the share seed from crypto/rand: %w", err)
	}
	return p, nil
}

// ErrInvalidInstance is matched by New's errors for an instance that
// does not fit the grid or the payload: a score outside the grid, a
// label other than 0 or 1, a probability outside [0, 1].
var ErrInvalidInstance = errors.New("invalid instance")

// check returns the bin of inst on g and its fixed-point probability.
func check(inst Instance, g *ecdf.Grid) (bin int, prob uint64, err error) {
	if bin, err = g.Bin(inst.Score); err != nil {
		return 0, 0, fmt.Errorf("score: %w", err)
	}
	if inst.Label != 0 && inst.Label != 1 {
		return 0, 0, fmt.Errorf("label %d is not 0 or 1", inst.Label)
	}
	if inst.HasProbability {
		if !(inst.Probability >= 0 && inst.Probability <= 1) {
			return 0, 0, fmt.Errorf("probability %v is not in [0, 1]", inst.Probability)
		}
		prob = uint64(math.Round(inst.Probability * payload.ProbabilityScale))
	}
	return bin, prob, nil
}

// ReportID returns the party's report ID.
func (p *Party) ReportID() payload.ReportID { return p.report }

// Bin returns the party's 1-based bin on the grid.
func (p *Party) Bin() int { return p.bin }

// Payload returns component c of the payload vector (in integer units:
// fixed point for Probability).
func (p *Party) Payload(c payload.Component) uint64 { return p.payload[c] }

// kernel returns payload_c·1[bin ≤ i] for every prefix i.
func (p *Party) kernel(c payload.Component, prefixes []int) []uint64 {
	k := make([]uint64, len(prefixes))
	for j, i := range prefixes {
		if p.bin <= i {
			k[j] = p.payload[c]
		}
	}
	return k
}

// AdditiveShares splits the kernel values of component c at prefixes into
// two additive shares mod 2^64, leader + helper = payload_c·1[bin ≤ i].
// The leader's share at prefix i is word i−1 of the ChaCha20 keystream
// keyed by the party's secret share seed (crypto/rand, drawn by New) with
// the component as nonce: pseudorandom to whoever lacks the seed, so each
// share alone reveals nothing, and the same for every call. A party thus
// sends the same shares of a prefix in every query batch: a re-send is
// an exact duplicate, and no two batches give a server two different
// share sums of one prefix to difference.
func (p *Party) AdditiveShares(c payload.Component, prefixes []int) (leader, helper []uint64, err error) {
	if err := p.checkQuery(c, prefixes); err != nil {
		return nil, nil, fmt.Errorf("party: %w", err)
	}
	leader, helper = p.shares(c, prefixes)
	return leader, helper, nil
}

// shares is AdditiveShares for a checked query.
func (p *Party) shares(c payload.Component, prefixes []int) (leader, helper []uint64) {
	leader = p.leaderShares(c, prefixes)
	helper = p.kernel(c, prefixes)
	for j := range helper {
		helper[j] -= leader[j]
	}
	return leader, helper
}

// leaderShares returns keystream word i−1 for every (increasing) prefix i
// of the party's share stream of component c: ChaCha20 under the share
// seed with nonce (c, 0, …), word w in 64-byte block w/8, which is the
// cipher's 32-bit counter (a grid has at most 2^26 bins).
func (p *Party) leaderShares(c payload.Component, prefixes []int) []uint64 {
	var nonce [chacha20.NonceSize]byte
	nonce[0] = byte(c)
	cipher, err := chacha20.NewUnauthenticatedCipher(p.seed[:], nonce[:])
	if err != nil {
		panic(err) // unreachable: key and nonce sizes are fixed
	}
	var block [64]byte
	cur := -1
	shares := make([]uint64, len(prefixes))
	for j, i := range prefixes {
		if b := (i - 1) / 8; b != cur {
			cipher.SetCounter(uint32(b))
			clear(block[:])
			cipher.XORKeyStream(block[:], block[:])
			cur = b
		}
		shares[j] = binary.LittleEndian.Uint64(block[8*((i-1)%8):])
	}
	return shares
}

// checkQuery validates a query batch against the party's grid.
func (p *Party) checkQuery(c payload.Component, prefixes []int) error {
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
	// Conn is the party's own connection. With the additive backend the
	// servers accept a report's shares only from the peer that enrolled
	// it, so Enrol and every SendShares must use the same peer.
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
			return fmt.Errorf("party: report %v: upload to %s: %w", p.report, to.peer, err)
		}
	}
	return nil
}

// SendShares answers an open additive query batch: one share vector to
// each server, from the connection the party enrolled over (the servers
// accept a report's shares only from the peer that enrolled it), bound
// to the batch by its digest (the servers refuse shares computed for
// any other prefixes or component than the batch they registered).
func (p *Party) SendShares(ctx context.Context, s Servers, q *protocol.OpenQuery) error {
	if err := p.checkQuery(q.Component, q.Prefixes); err != nil {
		return fmt.Errorf("party: report %v: query %v: %w", p.report, q.Query, err)
	}
	leader, helper := p.shares(q.Component, q.Prefixes)
	batch := q.Digest()
	for _, to := range []struct {
		peer   transport.PeerID
		shares []uint64
	}{{s.Leader, leader}, {s.Helper, helper}} {
		msg := &protocol.Shares{Dataset: s.Dataset, Query: q.Query, Batch: batch, Report: p.report, Values: to.shares}
		if _, err := protocol.Call[*protocol.Ack](ctx, s.Conn, to.peer, msg); err != nil {
			return fmt.Errorf("party: report %v: shares to %s: %w", p.report, to.peer, err)
		}
	}
	return nil
}
