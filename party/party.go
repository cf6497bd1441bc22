package party

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
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
	report  core.ID
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
	return &Party{report: id, bin: bin, bins: g.Len(), payload: [payload.NumComponents]uint64{1, y, 1 - y, prob}}, nil
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
func (p *Party) ReportID() core.ID { return p.report }

// Bin returns the party's 1-based bin on the grid.
func (p *Party) Bin() int { return p.bin }

// Payload returns component c of the payload vector (in integer units:
// fixed point for Probability).
func (p *Party) Payload(c core.Component) uint64 { return p.payload[c] }

// Servers is how a party reaches the two servers of one dataset.
type Servers struct {
	Conn           core.Conn
	Leader, Helper core.PeerID
	Dataset        string
	// Probability is set when the dataset collects the probability
	// component (server.Dataset.Probability): a verified DCF report then
	// carries it (UploadVerifiedKeys).
	Probability bool
}

// upload sends the leader's and the helper's uploads, each whatever the
// other server answered (a server that refuses a verified report tells
// the other), and returns their errors.
func (p *Party) upload(ctx context.Context, s Servers, leader, helper *protocol.Upload) error {
	var errs []error
	for _, to := range []struct {
		peer core.PeerID
		msg  *protocol.Upload
	}{{s.Leader, leader}, {s.Helper, helper}} {
		to.msg.Dataset, to.msg.Report = s.Dataset, p.report
		if _, err := protocol.Call[*protocol.Ack](ctx, s.Conn, to.peer, to.msg); err != nil {
			errs = append(errs, fmt.Errorf("party: report %v: upload to %s: %w", p.report, to.peer, err))
		}
	}
	return errors.Join(errs...)
}
