package deploy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
	"github.com/fedecdf/fedecdf/party"
)

// sealedFrameVersion is the first byte of every frame of the sealed
// upload transport; changing the frames' layout, the HPKE info strings
// or the MAC bumps it (TestSealedFrameKnownAnswer).
const sealedFrameVersion = 1

// The kinds of a sealed-transport frame, its second byte.
const (
	frameUpload  byte = 1 // party → server: a sealed protocol.Upload
	frameRelayed byte = 2 // party → leader: a sealed relayed report
	frameAck     byte = 3 // server → party: the response and its MAC
	frameRefusal byte = 4 // server → party: why the frame was not opened
)

// sealedInfo is the HPKE info string of each request kind: a frame
// opens only as the kind it was sealed as.
var sealedInfo = map[byte]string{
	frameUpload:  "fedecdf sealed upload v1",
	frameRelayed: "fedecdf sealed relayed report v1",
}

// ackLabel is the HPKE exporter context of the acknowledgement's MAC
// key, ackKeyLen its length.
const (
	ackLabel  = "fedecdf sealed ack v1"
	ackKeyLen = sha256.Size
)

// Limits of the frames: the header (version, kind, big-endian uint32
// length); an answer carries a protocol.Ack or Error and its MAC; a
// refusal's reason is cut to maxRefusalLen.
const (
	sealedHeaderLen = 6
	maxAnswerLen    = protocol.MaxTextLen + 64 + ackKeyLen
	maxRefusalLen   = 1024
)

// The defaults of ServerConfig's sealed-upload fields.
const (
	DefaultUploadTimeout = 30 * time.Second
	DefaultUploadConns   = 1024
)

// writeSealedFrame writes one frame.
func writeSealedFrame(w io.Writer, kind byte, body []byte) error {
	b := make([]byte, sealedHeaderLen, sealedHeaderLen+len(body))
	b[0], b[1] = sealedFrameVersion, kind
	binary.BigEndian.PutUint32(b[2:], uint32(len(body)))
	_, err := w.Write(append(b, body...))
	return err
}

// readSealedFrame reads one frame of a kind in kinds whose body is at
// most maxLen bytes.
func readSealedFrame(r io.Reader, maxLen int, kinds ...byte) (kind byte, body []byte, err error) {
	var h [sealedHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, fmt.Errorf("reading the frame header: %w", err)
	}
	if h[0] != sealedFrameVersion {
		return 0, nil, fmt.Errorf("frame version %d is not supported (want %d)", h[0], sealedFrameVersion)
	}
	kind = h[1]
	known := false
	for _, k := range kinds {
		known = known || k == kind
	}
	if !known {
		return 0, nil, fmt.Errorf("frame kind %d is not one of %v here", kind, kinds)
	}
	n := binary.BigEndian.Uint32(h[2:])
	if uint64(n) > uint64(maxLen) {
		return 0, nil, fmt.Errorf("frame of %d bytes exceeds the limit of %d", n, maxLen)
	}
	body = make([]byte, n) // at most maxLen, derived from the manifest's report size
	if got, err := io.ReadFull(r, body); err != nil {
		return 0, nil, fmt.Errorf("frame truncated after %d of %d bytes: %w", got, n, err)
	}
	return kind, body, nil
}

// parseSealedRequest decodes the body of a party's frame: a sealed
// upload without the version byte (the frame's header has it).
func parseSealedRequest(body []byte) (*sealedUpload, error) {
	var s sealedUpload
	r := wire.NewReader(body)
	s.decode(r)
	if err := r.Finish(); err != nil {
		return nil, protocol.Malformed(fmt.Errorf("sealed frame: %w", err))
	}
	return &s, nil
}

// ackMAC is the MAC of an answer's body under the exported key.
func ackMAC(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{sealedFrameVersion, frameAck})
	m.Write(body)
	return m.Sum(nil)
}

// answerBody is the body of an answer: the protocol response (an Ack
// or an Error) and its MAC.
func answerBody(key, resp []byte) []byte {
	var w wire.Writer
	w.Blob(resp)
	return append(w.Bytes(), ackMAC(key, w.Bytes())...)
}

// maxSealedFrame is the largest body of a valid request frame to a
// server of m: a relayed report (the largest kind) holds two uploads
// of upload bytes each; the dataset name, report IDs, encapsulated keys,
// AEAD tags and lengths around them take under 2 KiB.
func maxSealedFrame(upload int) int { return 2*upload + 2048 }

// maxUploadSize returns the size of the largest encoded upload of a
// party of m: a report's size depends on the grid and the backend only,
// so the largest of the uploads of the grid's first and last bin.
func maxUploadSize(m *manifest.Manifest) (int, error) {
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

// sealedCall is one sealed upload ready to be sent, and sent again: the
// frame for the server to at addr and the key of its answer's MAC.
type sealedCall struct {
	to     transport.PeerID
	addr   string
	frame  []byte
	ackKey []byte
}

// newSealedCall seals plaintext (an encoded upload, or a relayed
// report) of report of dataset to the server e as a frame of kind, its
// ephemeral key drawn from rnd (crypto/rand but in tests).
func newSealedCall(rnd io.Reader, e manifest.Endpoint, to transport.PeerID, kind byte, report payload.ReportID, dataset string, plaintext []byte) (*sealedCall, error) {
	s, key, err := seal(rnd, e.HPKEPublicKey, sealedInfo[kind], dataset, report, plaintext)
	if err != nil {
		return nil, fmt.Errorf("sealing report %v to the %s: %w", report, to, err)
	}
	var w wire.Writer
	s.encode(&w)
	var b bytes.Buffer
	if err := writeSealedFrame(&b, kind, w.Bytes()); err != nil {
		return nil, err
	}
	return &sealedCall{to: to, addr: e.UploadAddr, frame: b.Bytes(), ackKey: key}, nil
}

// callSealed sends c, retrying a failed connection or an answer that
// fails its MAC (ErrForgedAck) within the party's retry schedule, and
// returns the server's acknowledgement, or its refusal: a
// *protocol.RemoteError when authenticated, as over libp2p, an
// *unopenedError when the server could not open the frame (neither is
// retried).
func (p *Party) callSealed(ctx context.Context, c *sealedCall) (*protocol.Ack, error) {
	var resp []byte
	err := p2p.Retry(ctx, p.tc, func() error {
		var err error
		resp, err = c.attempt(ctx, &p.dialer, p.tc.CallTimeout)
		return err
	}, func(err error) bool {
		var refused *protocol.RemoteError
		var unopened *unopenedError
		return !errors.As(err, &refused) && !errors.As(err, &unopened)
	}, "server", c.to, "addr", c.addr)
	if err != nil {
		return nil, fmt.Errorf("sealed upload to the %s at %s: %w", c.to, c.addr, err)
	}
	return decodeAck(c.to, resp)
}

// unopenedError is a server's refusal of a frame it could not open
// (sealed to another key, tampered with, malformed). It cannot be
// authenticated, so it matches none of the server's sentinel errors:
// a network attacker may have written it.
type unopenedError struct {
	server transport.PeerID
	reason string
}

func (e *unopenedError) Error() string {
	return fmt.Sprintf("the %s refused the sealed frame unopened (an unauthenticated answer): %q", e.server, e.reason)
}

// attempt sends the frame over a new connection and returns the
// server's protocol response once its MAC checks, or the refusal of the
// unopened frame (*unopenedError).
func (c *sealedCall) attempt(ctx context.Context, dialer *net.Dialer, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, &DialError{Server: c.to, Err: err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(c.frame); err != nil {
		return nil, fmt.Errorf("sending the frame: %w", err)
	}
	kind, body, err := readSealedFrame(conn, maxAnswerLen, frameAck, frameRefusal)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if kind == frameRefusal {
		return nil, &unopenedError{server: c.to, reason: string(body)}
	}
	r := wire.NewReader(body)
	resp := r.Blob("response", maxAnswerLen)
	mac := make([]byte, ackKeyLen)
	r.Fixed("MAC", mac)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("answer: %w", protocol.Malformed(err))
	}
	if !hmac.Equal(mac, ackMAC(c.ackKey, body[:len(body)-ackKeyLen])) {
		return nil, fmt.Errorf("the %s's answer %w: forged or altered on the way", c.to, ErrForgedAck)
	}
	return resp, nil
}

// uploadListener is a server's sealed-upload listener: one frame per
// connection, admitted per client address (admission), at most cap(work)
// frames handled at once once read.
type uploadListener struct {
	s        *Server
	ln       net.Listener
	adm      *admission
	work     chan struct{}
	timeout  time.Duration
	maxFrame int
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	// shed counts the connections refused or closed to make room.
	shed atomic.Int64
}

// listenUploads starts the sealed-upload listener on addr.
func (s *Server) listenUploads(addr string) error {
	upload, err := maxUploadSize(s.cfg.Manifest)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sealed-upload listener: %w", err)
	}
	u := &uploadListener{
		s: s, ln: ln, adm: newAdmission(s.cfg.UploadLimits, s.cfg.UploadConns), work: make(chan struct{}, s.cfg.UploadConns),
		timeout: s.cfg.UploadTimeout, maxFrame: maxSealedFrame(upload),
	}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	s.uploads = u
	u.wg.Go(u.serve)
	return nil
}

// uploadAddr returns the address the sealed-upload listener is bound
// to ("" if none).
func (s *Server) uploadAddr() string {
	if s.uploads == nil {
		return ""
	}
	return s.uploads.ln.Addr().String()
}

// serve accepts every connection at once, until close, and admits it or
// closes it (admission).
func (u *uploadListener) serve() {
	for {
		c, err := u.ln.Accept()
		if err != nil {
			if u.ctx.Err() != nil {
				return
			}
			u.s.connWarn("", "sealed-upload listener: accept failed", "err", err)
			select {
			case <-time.After(100 * time.Millisecond): // e.g. out of file descriptors
			case <-u.ctx.Done():
				return
			}
			continue
		}
		w, evicted, refused := u.adm.admit(c)
		if evicted != nil {
			evicted.Close()
		}
		if refused != "" {
			c.Close()
			u.shed.Add(1)
			u.s.connWarn(clientAddr(c.RemoteAddr()).String(), "sealed-upload connection refused", "from", c.RemoteAddr().String(), "reason", refused)
			continue
		}
		u.wg.Go(func() { u.handle(w) })
	}
}

// close stops accepting and waits for the connections being served.
func (u *uploadListener) close() {
	u.cancel()
	u.ln.Close()
	u.wg.Wait()
}

// headerReader reads from a connection whose read deadline is the
// header's until the frame header has arrived, and then the frame's.
type headerReader struct {
	c     net.Conn
	got   int
	frame time.Time // the deadline of the whole frame
}

func (r *headerReader) Read(b []byte) (int, error) {
	n, err := r.c.Read(b)
	if r.got < sealedHeaderLen && r.got+n >= sealedHeaderLen {
		r.c.SetReadDeadline(r.frame)
	}
	r.got += n
	return n, err
}

// handle reads w's frame, its header within the header timeout and the
// whole within the upload timeout, frees its place (admission), answers
// it and closes the connection; a frame that cannot be read closes it
// unanswered.
func (u *uploadListener) handle(w *waiter) {
	c := w.conn
	defer c.Close()
	from := transport.PeerID("tcp " + c.RemoteAddr().String())
	c.SetReadDeadline(w.since.Add(min(u.s.cfg.UploadLimits.HeaderTimeout, u.timeout)))
	r := &headerReader{c: c, frame: w.since.Add(u.timeout)}
	// Buffered: a frame the party wrote at once is read in one call.
	kind, body, err := readSealedFrame(bufio.NewReaderSize(r, min(u.maxFrame+sealedHeaderLen, 64<<10)), u.maxFrame, frameUpload, frameRelayed)
	evicted := u.adm.release(w)
	switch {
	case evicted && err != nil: // a frame read in full is handled all the same
		u.shed.Add(1)
		u.s.log.Debug("sealed-upload connection closed to make room", "from", from)
		return
	case errors.Is(err, io.EOF):
		u.s.log.Debug("sealed-upload connection closed before a frame", "from", from)
		return
	case err != nil:
		u.s.counters.rejected.Add(1)
		u.s.connWarn(w.addr.String(), "sealed upload dropped", "from", from, "err", err)
		return
	}
	select {
	case u.work <- struct{}{}:
		defer func() { <-u.work }()
	case <-u.ctx.Done():
		return
	}
	answerKind, answer := u.s.answerSealed(u.ctx, from, kind, body)
	if answer == nil {
		return // nothing to answer yet (the store failed): the party retries
	}
	c.SetWriteDeadline(time.Now().Add(u.timeout))
	if err := writeSealedFrame(c, answerKind, answer); err != nil {
		u.s.connWarn(w.addr.String(), "could not answer a sealed upload", "from", from, "err", err)
	}
}

// answerSealed opens a party's frame of kind with the server's HPKE key
// and handles what it holds as the same upload over libp2p would be
// (handleReport, or relay at the leader of a relay deployment), and
// returns the answer: the response with its MAC, or the refusal of a
// frame that does not open (which cannot be authenticated).
func (s *Server) answerSealed(ctx context.Context, from transport.PeerID, kind byte, body []byte) (byte, []byte) {
	refuse := func(report, reason string) (byte, []byte) {
		s.refuseReport(from, report, reason)
		text := string(s.name) + ": " + reason
		return frameRefusal, []byte(text[:min(len(text), maxRefusalLen)])
	}
	sealed, err := parseSealedRequest(body)
	if err != nil {
		return refuse("", err.Error())
	}
	if kind == frameRelayed && (s.name != manifest.LeaderName || s.cfg.Manifest.Upload != manifest.UploadRelay) {
		return refuse(sealed.Report.String(), fmt.Sprintf("the %s of this %s deployment takes no relayed reports: upload each server its own share", s.name, s.cfg.Manifest.Upload))
	}
	pt, key, err := sealed.openWith(s.hpkeKey, sealedInfo[kind])
	if err != nil {
		return refuse(sealed.Report.String(), err.Error())
	}
	resp := s.handleOpened(ctx, from, kind, sealed, pt)
	if resp == nil {
		return frameAck, nil
	}
	return frameAck, answerBody(key, resp)
}

// handleOpened handles the plaintext pt of an opened frame: an upload,
// or a relayed report, of the report the frame names.
func (s *Server) handleOpened(ctx context.Context, from transport.PeerID, kind byte, sealed *sealedUpload, pt []byte) []byte {
	if kind == frameUpload {
		if err := sealed.checkUpload(pt); err != nil {
			return s.refuseReport(from, sealed.Report.String(), err.Error())
		}
		if !s.active.Load() {
			return s.ingest(from, pt) // standing by (shared.go)
		}
		return s.handleReport(ctx, from, pt)
	}
	rr, err := parseRelayedReport(pt)
	if err != nil {
		return s.refuseReport(from, sealed.Report.String(), err.Error())
	}
	if rr.Helper.Dataset != sealed.Dataset || rr.Helper.Report != sealed.Report {
		return s.refuseReport(from, sealed.Report.String(), fmt.Sprintf("the frame of report %v of %q holds report %v of %q", sealed.Report, sealed.Dataset, rr.Helper.Report, rr.Helper.Dataset))
	}
	return s.relay(ctx, from, rr)
}
