package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// The defaults of ServerConfig's sealed-upload fields.
const (
	DefaultUploadTimeout = 30 * time.Second
	DefaultUploadConns   = 1024
)

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
	upload, err := client.MaxUploadSize(s.cfg.Manifest)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sealed-upload listener: %w", err)
	}
	u := &uploadListener{
		s: s, ln: ln, adm: newAdmission(s.cfg.UploadLimits, s.cfg.UploadConns), work: make(chan struct{}, s.cfg.UploadConns),
		timeout: s.cfg.UploadTimeout, maxFrame: sealed.MaxFrame(upload),
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
	if r.got < sealed.HeaderLen && r.got+n >= sealed.HeaderLen {
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
	kind, body, err := sealed.ReadFrame(bufio.NewReaderSize(r, min(u.maxFrame+sealed.HeaderLen, 64<<10)), u.maxFrame, sealed.FrameUpload, sealed.FrameRelayed)
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
	if err := sealed.WriteFrame(c, answerKind, answer); err != nil {
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
		return sealed.FrameRefusal, []byte(text[:min(len(text), sealed.MaxRefusalLen)])
	}
	su, err := sealed.ParseRequest(body)
	if err != nil {
		return refuse("", err.Error())
	}
	if kind == sealed.FrameRelayed && (s.name != manifest.LeaderName || s.cfg.Manifest.Upload != manifest.UploadRelay) {
		return refuse(su.Report.String(), fmt.Sprintf("the %s of this %s deployment takes no relayed reports: upload each server its own share", s.name, s.cfg.Manifest.Upload))
	}
	pt, key, err := su.OpenWith(s.hpkeKey, sealed.Info[kind])
	if err != nil {
		return refuse(su.Report.String(), err.Error())
	}
	resp := s.handleOpened(ctx, from, kind, su, pt)
	if resp == nil {
		return sealed.FrameAck, nil
	}
	return sealed.FrameAck, sealed.AnswerBody(key, resp)
}

// handleOpened handles the plaintext pt of an opened frame: an upload,
// or a relayed report, of the report the frame names.
func (s *Server) handleOpened(ctx context.Context, from transport.PeerID, kind byte, su *sealed.Upload, pt []byte) []byte {
	if kind == sealed.FrameUpload {
		if err := su.CheckUpload(pt); err != nil {
			return s.refuseReport(from, su.Report.String(), err.Error())
		}
		if resp, ok := s.asCoordinator(func() []byte { return s.handleReport(ctx, from, pt) }); ok {
			return resp
		}
		return s.ingest(from, pt) // standing by (shared.go)
	}
	rr, err := sealed.ParseRelayedReport(pt)
	if err != nil {
		return s.refuseReport(from, su.Report.String(), err.Error())
	}
	if rr.Helper.Dataset != su.Dataset || rr.Helper.Report != su.Report {
		return s.refuseReport(from, su.Report.String(), fmt.Sprintf("the frame of report %v of %q holds report %v of %q", su.Report, su.Dataset, rr.Helper.Report, rr.Helper.Dataset))
	}
	return s.relay(ctx, from, rr)
}
