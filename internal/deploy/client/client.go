package client

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// Party is a party's (or a batch of parties') host: it dials the two
// servers of the manifest and nothing else.
type Party struct {
	m    *manifest.Manifest
	grid *ecdf.Grid
	host *p2p.Host  // nil when every upload goes over the sealed transport
	tc   p2p.Config // timeouts and retries
	// dialer dials the sealed-upload connections (tests bind it to a
	// local address).
	dialer net.Dialer
}

// DefaultUploadAttempt bounds one attempt of a party's upload to a
// server (connecting, sending, reading the answer) unless the
// p2p.Config given to NewParty sets CallTimeout: an attempt that times
// out is retried while the retry window lasts, so a party with
// RetryWindow W gives up within W plus one attempt, whatever the server
// does (accepts and stalls, stopped, unreachable).
const DefaultUploadAttempt = 20 * time.Second

// NewParty starts a party. When the manifest gives every server it
// uploads to (both in direct mode, the leader in relay mode) an upload
// address, it uploads over the sealed transport (a TCP connection per
// upload, HPKE-sealed to the server) and needs no libp2p host;
// otherwise it starts a dial-only libp2p host with key (a fresh Ed25519
// key when nil: parties are anonymous to the servers). tc sets timeouts
// and retries; its Key, Peers and Listen are set here.
func NewParty(m *manifest.Manifest, key crypto.PrivKey, tc p2p.Config) (*Party, error) {
	if tc.CallTimeout == 0 {
		tc.CallTimeout = DefaultUploadAttempt
	}
	g, err := m.NewGrid()
	if err != nil {
		return nil, fmt.Errorf("manifest grid: %w", err)
	}
	if !partyUsesLibp2p(m) {
		return &Party{m: m, grid: g, tc: tc}, nil
	}
	book, err := m.Book(false)
	if err != nil {
		return nil, err
	}
	if key == nil {
		id, err := manifest.NewIdentity()
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
	return &Party{m: m, grid: g, host: h, tc: tc}, nil
}

// partyUsesLibp2p reports whether a party of m uploads to a server over
// libp2p: one it uploads to has no upload address.
func partyUsesLibp2p(m *manifest.Manifest) bool {
	if m.Upload == manifest.UploadRelay {
		return m.Leader.UploadAddr == ""
	}
	return m.Leader.UploadAddr == "" || m.Helper.UploadAddr == ""
}

// Close stops the host, if any.
func (p *Party) Close() error {
	if p.host == nil {
		return nil
	}
	return p.host.Close()
}

// Report is one party's prepared report: its ID and the upload to each
// server. Sending it again (a retry after a lost acknowledgement) is
// safe: the servers drop the duplicate.
type Report struct {
	ID             payload.ReportID
	Leader, Helper *protocol.Upload
}

// NewReport validates inst against the manifest's grid, draws a report
// ID and its verified report: for the dcf backend the verified DCF keys
// of its bin, count, label and probability (party.VerifiedKeys; dp-ecdf
// §4.2), for the additive backend its Prio3 report
// (party.VerifiedReport).
func (p *Party) NewReport(inst party.Instance) (*Report, error) {
	pt, err := party.New(inst, p.grid)
	if err != nil {
		return nil, err
	}
	return p.report(pt, pt.ReportID(), nil)
}

// report is the party's verified report under the report ID id, its
// randomness from rand (crypto/rand when nil).
func (p *Party) report(pt *party.Party, id payload.ReportID, rand io.Reader) (*Report, error) {
	if p.m.Backend == string(server.Additive) {
		r, err := pt.VerifiedReportAt(id, rand)
		if err != nil {
			return nil, err
		}
		return p.verifiedReport(r.ID, r.Public, r.Shares), nil
	}
	r, err := pt.VerifiedKeysAt(id, true, rand) // a dcf manifest collects the probability
	if err != nil {
		return nil, err
	}
	return p.verifiedReport(r.ID, nil, r.Shares), nil
}

// verifiedReport is the upload of a verified report to each server: the
// public share (none for the dcf backend) and that server's share, under
// the report ID id.
func (p *Party) verifiedReport(id payload.ReportID, public []byte, shares [2][]byte) *Report {
	return &Report{
		ID:     id,
		Leader: &protocol.Upload{Dataset: p.m.Dataset, Report: id, Public: public, Share: shares[0]},
		Helper: &protocol.Upload{Dataset: p.m.Dataset, Report: id, Public: public, Share: shares[1]},
	}
}

// Send uploads r in the manifest's mode — to each server directly (to
// both at once, each call retrying on its own within the transport's
// retry window), or through the leader with the helper's key sealed to
// the helper — and returns once both servers have made it durable; dup
// reports whether a server already held it. A direct upload that not
// both servers acknowledged fails with an *UploadError saying which
// server holds it and why the other failed.
func (p *Party) Send(ctx context.Context, r *Report) (dup bool, err error) {
	if p.m.Upload == manifest.UploadRelay {
		return p.sendRelayed(ctx, r)
	}
	targets := []struct {
		peer transport.PeerID
		end  manifest.Endpoint
		held Held
		up   *protocol.Upload
	}{{manifest.LeaderName, p.m.Leader, HeldByLeader, r.Leader}, {manifest.HelperName, p.m.Helper, HeldByHelper, r.Helper}}
	acks := make([]*protocol.Ack, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for k, to := range targets {
		wg.Go(func() { acks[k], errs[k] = p.upload(ctx, to.peer, to.end, to.up) })
	}
	wg.Wait()
	ue := &UploadError{Report: r.ID}
	for k, to := range targets {
		if errs[k] != nil {
			ue.Failed = append(ue.Failed, ServerError{Server: to.peer, Err: errs[k]})
			continue
		}
		ue.Held |= to.held
		dup = dup || acks[k].Duplicate
	}
	if ue.Failed != nil {
		return false, ue
	}
	return dup, nil
}

// upload sends up to the server to at e, over the sealed transport when
// the manifest gives it an upload address, over libp2p otherwise.
func (p *Party) upload(ctx context.Context, to transport.PeerID, e manifest.Endpoint, up *protocol.Upload) (*protocol.Ack, error) {
	if e.UploadAddr == "" {
		return protocol.Call[*protocol.Ack](ctx, p.host.Conn(p2p.ReportProtocol), to, up)
	}
	c, err := NewSealedCall(crand.Reader, e, to, sealed.FrameUpload, up.Report, up.Dataset, protocol.Encode(up))
	if err != nil {
		return nil, err
	}
	return p.CallSealed(ctx, c)
}

// Submit prepares and sends the report of one instance.
func (p *Party) Submit(ctx context.Context, inst party.Instance) (payload.ReportID, error) {
	r, err := p.NewReport(inst)
	if err != nil {
		return payload.ReportID{}, err
	}
	_, err = p.Send(ctx, r)
	return r.ID, err
}

// Host returns the party's libp2p host, nil when every upload goes over
// the sealed transport; tests call the servers' protocols through it.
func (p *Party) Host() *p2p.Host { return p.host }

// Transport returns the party's transport configuration.
func (p *Party) Transport() p2p.Config { return p.tc }

// SetDialer sets the dialer of the party's sealed uploads (tests give
// each party its own source address).
func (p *Party) SetDialer(d net.Dialer) { p.dialer = d }
