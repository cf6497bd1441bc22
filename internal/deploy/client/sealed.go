package client

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
	"github.com/fedecdf/fedecdf/party"
)

// maxUploadSize returns the size of the largest encoded upload of a
// party of m: a report's size depends on the grid and the backend only,
// so the largest of the uploads of the grid's first and last bin.
func MaxUploadSize(m *manifest.Manifest) (int, error) {
	g, err := m.NewGrid()
	if err != nil {
		return 0, err
	}
	p := &Party{m: m, grid: g}
	size := 0
	for _, score := range []float64{m.Grid.Min, m.Grid.Max} {
		r, err := p.NewReport(party.Instance{Score: score, Probability: 0.5, HasProbability: true})
		if err != nil {
			return 0, fmt.Errorf("sizing the sealed-upload frames: %w", err)
		}
		size = max(size, len(protocol.Encode(r.Leader)), len(protocol.Encode(r.Helper)))
	}
	return size, nil
}

// SealedCall is one sealed upload ready to be sent, and sent again: the
// Frame for the server To at any of Addrs (its processes' sealed-upload
// addresses) and the key of its answer's MAC. Every attempt sends the
// same frame, so the server's processes see one report ID however many
// of them it reaches.
type SealedCall struct {
	To     transport.PeerID
	Addrs  []string
	Frame  []byte
	AckKey []byte
	// next is the index in Addrs of the next attempt's first address.
	next int
}

// NewSealedCall seals plaintext (an encoded upload, or a relayed
// report) of report of dataset to the server e as a frame of kind, its
// ephemeral key drawn from rnd (crypto/rand but in tests).
func NewSealedCall(rnd io.Reader, e manifest.Endpoint, to transport.PeerID, kind byte, report payload.ReportID, dataset string, plaintext []byte) (*SealedCall, error) {
	s, key, err := sealed.Seal(rnd, e.HPKEPublicKey, sealed.Info[kind], dataset, report, plaintext)
	if err != nil {
		return nil, fmt.Errorf("sealing report %v to the %s: %w", report, to, err)
	}
	var w wire.Writer
	s.Encode(&w)
	var b bytes.Buffer
	if err := sealed.WriteFrame(&b, kind, w.Bytes()); err != nil {
		return nil, err
	}
	return &SealedCall{To: to, Addrs: e.UploadAddrs(), Frame: b.Bytes(), AckKey: key, next: firstAddr(report, len(e.UploadAddrs()))}, nil
}

// firstAddr is the index of the first of n addresses report is sent to:
// its ID's first bytes modulo n, which spreads uniformly random (or
// HMAC-derived) IDs evenly over a server's processes.
func firstAddr(report payload.ReportID, n int) int {
	if n < 2 {
		return 0
	}
	return int(binary.BigEndian.Uint32(report[:4]) % uint32(n))
}

// CallSealed sends c, retrying a failed connection or an answer that
// fails its MAC (ErrForgedAck) within the party's retry schedule (a
// server with several addresses: each attempt tries them in turn from
// the next one, each attempt after a failure from the one after the
// last tried), and
// returns the server's acknowledgement, or its refusal: a
// *protocol.RemoteError when authenticated, as over libp2p, an
// *UnopenedError when the server could not open the frame (neither is
// retried).
func (p *Party) CallSealed(ctx context.Context, c *SealedCall) (*protocol.Ack, error) {
	var resp []byte
	err := p2p.Retry(ctx, p.tc, func() error {
		var err error
		resp, err = c.attempt(ctx, &p.dialer, p.tc.CallTimeout)
		return err
	}, func(err error) bool {
		var refused *protocol.RemoteError
		var unopened *UnopenedError
		return !errors.As(err, &refused) && !errors.As(err, &unopened)
	}, "server", c.To, "addrs", c.Addrs)
	if err != nil {
		return nil, fmt.Errorf("sealed upload to the %s at %s: %w", c.To, strings.Join(c.Addrs, ", "), err)
	}
	return sealed.DecodeAck(c.To, resp)
}

// UnopenedError is a server's refusal of a frame it could not open
// (sealed to another key, tampered with, malformed). It cannot be
// authenticated, so it matches none of the server's sentinel errors:
// a network attacker may have written it.
type UnopenedError struct {
	Server transport.PeerID
	Reason string
}

func (e *UnopenedError) Error() string {
	return fmt.Sprintf("the %s refused the sealed frame unopened (an unauthenticated answer): %q", e.Server, e.Reason)
}

// attempt sends the frame over a new connection and returns the
// server's protocol response once its MAC checks, or the refusal of the
// unopened frame (*UnopenedError). It dials the server's addresses from
// the next one until one connects (a process that is down refuses at
// once), and moves next past the address it sent to, so that the
// attempt after a failure (a process that stalls, or leaves the upload
// unanswered because it lost its database) goes to another process.
func (c *SealedCall) attempt(ctx context.Context, dialer *net.Dialer, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var conn net.Conn
	err := errors.New("no upload address")
	for range c.Addrs {
		addr := c.Addrs[c.next%len(c.Addrs)]
		c.next = (c.next + 1) % len(c.Addrs)
		if conn, err = dialer.DialContext(ctx, "tcp", addr); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, &DialError{Server: c.To, Err: err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(c.Frame); err != nil {
		return nil, fmt.Errorf("sending the frame: %w", err)
	}
	kind, body, err := sealed.ReadFrame(conn, sealed.MaxAnswerLen, sealed.FrameAck, sealed.FrameRefusal)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if kind == sealed.FrameRefusal {
		return nil, &UnopenedError{Server: c.To, Reason: string(body)}
	}
	r := wire.NewReader(body)
	resp := r.Blob("response", sealed.MaxAnswerLen)
	mac := make([]byte, sealed.AckKeyLen)
	r.Fixed("MAC", mac)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("answer: %w", protocol.Malformed(err))
	}
	if !hmac.Equal(mac, sealed.AckMAC(c.AckKey, body[:len(body)-sealed.AckKeyLen])) {
		return nil, fmt.Errorf("the %s's answer %w: forged or altered on the way", c.To, ErrForgedAck)
	}
	return resp, nil
}

// sendRelayed uploads r through the leader: its own key in the clear
// (over Noise, or within the frame sealed to the leader when the
// manifest gives the leader an upload address), the helper's sealed to
// the helper. The leader answers once both servers have made the report
// durable.
func (p *Party) sendRelayed(ctx context.Context, r *Report) (dup bool, err error) {
	su, err := sealed.SealUpload(p.m.Helper.HPKEPublicKey, r.Helper)
	if err != nil {
		return false, err
	}
	rr := (&sealed.RelayedReport{Leader: protocol.Encode(r.Leader), Helper: *su}).Marshal()
	call := func() (*protocol.Ack, error) {
		resp, err := p.host.Conn(p2p.RelayProtocol).Call(ctx, manifest.LeaderName, rr)
		if err != nil {
			return nil, err
		}
		return sealed.DecodeAck(manifest.LeaderName, resp)
	}
	if e := p.m.Leader; e.UploadAddr != "" {
		sc, err := NewSealedCall(rand.Reader, e, manifest.LeaderName, sealed.FrameRelayed, r.ID, p.m.Dataset, rr)
		if err != nil {
			return false, err
		}
		call = func() (*protocol.Ack, error) { return p.CallSealed(ctx, sc) }
	}
	var ack *protocol.Ack
	// The leader holds its share once it answers that the relay failed:
	// retry the relay (the leader drops its duplicate) within the window.
	err = p2p.Retry(ctx, p.tc, func() error {
		ack, err = call()
		return err
	}, func(err error) bool { return errors.Is(err, sealed.ErrRelayFailed) }, "report", r.ID.String())
	switch {
	case errors.Is(err, sealed.ErrRelayFailed):
		return false, &UploadError{Report: r.ID, Held: HeldByLeader, Failed: []ServerError{{Server: manifest.HelperName, Err: err}}}
	case err != nil:
		return false, fmt.Errorf("report %v: relayed upload to the leader: %w", r.ID, err)
	}
	return ack.Duplicate, nil
}
