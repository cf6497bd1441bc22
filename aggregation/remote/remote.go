package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// Client is the analyst's client of the two servers: an
// aggregation.UStat over the additive or dcf backend. It talks to the
// leader only.
type Client struct {
	backend server.Backend
	conn    core.Conn
	leader  core.PeerID
	dataset string
}

// New returns the analyst's client of dataset at leader.
func New(backend server.Backend, conn core.Conn, leader core.PeerID, dataset string) (*Client, error) {
	if backend != server.Additive && backend != server.DCF {
		return nil, fmt.Errorf("remote: unknown secure-sum backend %q (want additive or dcf)", backend)
	}
	return &Client{backend: backend, conn: conn, leader: leader, dataset: dataset}, nil
}

// Backend returns "additive" or "dcf".
func (r *Client) Backend() string { return string(r.backend) }

// NewRelease implements aggregation.UStat: both servers agree on the
// report set, charge their ledgers and draw their own seeds.
func (r *Client) NewRelease(ctx context.Context, spec aggregation.ReleaseSpec) (*aggregation.Release, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	id, err := payload.NewID()
	if err != nil {
		return nil, err
	}
	msg := &protocol.CreateRelease{Dataset: r.dataset, Release: id, Mechanism: spec.Mechanism, Components: spec.Components}
	resp, err := protocol.Call[*protocol.ReleaseCreated](ctx, r.conn, r.leader, msg)
	if err != nil {
		return nil, &ReleaseError{Release: id, Err: err}
	}
	return aggregation.NewRelease(id, spec, resp.Reports, 2)
}

// ReleaseError is the failure of NewRelease to create release Release.
// Unless the leader refused the release and it is not pending
// (Unsure), the leader may hold it: reading it by its ID (OpenRelease)
// charges nothing more and completes it, or aborts it at both servers.
type ReleaseError struct {
	Release core.ID
	Err     error // the leader's refusal, or the call's failure
}

// Error is the leader's refusal (which names the release), or the
// call's failure after the release's ID.
func (e *ReleaseError) Error() string {
	if e.refused() {
		return e.Err.Error()
	}
	if !e.Unsure() {
		return fmt.Sprintf("remote: release %v: %v; the leader never read the request: nothing was created or charged", e.Release, e.Err)
	}
	return fmt.Sprintf("remote: release %v: %v; the leader may have created it", e.Release, e.Err)
}

// Unwrap returns Err.
func (e *ReleaseError) Unwrap() error { return e.Err }

// Unsure reports whether the release may exist at the servers: the
// leader read the request but did not answer, or answered that it is
// pending. A request never delivered (transport.ErrNotDelivered) created
// nothing.
func (e *ReleaseError) Unsure() bool {
	if e.refused() {
		return errors.Is(e.Err, server.ErrReleasePending)
	}
	return !errors.Is(e.Err, transport.ErrNotDelivered)
}

func (e *ReleaseError) refused() bool {
	var refused *protocol.RemoteError
	return errors.As(e.Err, &refused)
}

// OpenRelease returns an existing release id of the given components, as
// the servers recorded it (mechanism and report count from the leader's
// answers to a one-prefix query of each component, which re-reads the
// release's fixed noise and costs no budget), so that it can be queried
// again (Sum) after the analyst that created it is gone.
func (r *Client) OpenRelease(ctx context.Context, id core.ID, components []core.Component) (*aggregation.Release, error) {
	spec, err := aggregation.ReleaseSpec{Components: components}.Normalize()
	if err != nil {
		return nil, err
	}
	var first *protocol.Answer
	for _, c := range spec.Components {
		ans, err := protocol.Call[*protocol.Answer](ctx, r.conn, r.leader, &protocol.Query{Dataset: r.dataset, Release: id, Component: c, Prefixes: []int{1}})
		if err != nil {
			return nil, fmt.Errorf("remote: release %v, component %v: %w", id, c, err)
		}
		if first == nil {
			first = ans
		}
	}
	spec.Mechanism = first.Mechanism
	return aggregation.NewRelease(id, spec, first.Reports, 2)
}

// Sum implements aggregation.UStat: the leader answers from both
// servers' aggregates, with no party online.
func (r *Client) Sum(ctx context.Context, q aggregation.Query) (*aggregation.Result, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	msg := &protocol.Query{Dataset: r.dataset, Release: q.Release.ID, Component: q.Component, Prefixes: q.Prefixes}
	ans, err := protocol.Call[*protocol.Answer](ctx, r.conn, r.leader, msg)
	if err != nil {
		return nil, err
	}
	if len(ans.Values) != len(q.Prefixes) {
		return nil, fmt.Errorf("remote: leader answered %d values for %d prefixes", len(ans.Values), len(q.Prefixes))
	}
	if ans.Reports != q.Release.Reports {
		return nil, fmt.Errorf("remote: leader summed %d reports, but release %v has %d", ans.Reports, q.Release.ID, q.Release.Reports)
	}
	sums := make([]int64, len(ans.Values))
	for j, v := range ans.Values {
		sums[j] = int64(v)
	}
	return &aggregation.Result{Query: q, Sums: sums}, nil
}
