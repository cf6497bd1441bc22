package deploy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// relayInfo is the HPKE info string: it binds a sealed share to this
// protocol and version.
const relayInfo = "fedecdf relayed upload v1"

// relayVersion is the first byte of a relayed report and a sealed upload.
const relayVersion = 1

// Limits of the sealed fields: an X25519 encapsulated key is 32 bytes;
// the ciphertext is an encoded upload plus the AEAD tag.
const (
	maxEncLen        = 256
	maxCiphertextLen = protocol.MaxKeySize + protocol.MaxNameLen + 1024
)

// sealedUpload is the helper's upload of one report, HPKE-sealed to the
// helper. The dataset and report ID travel in the clear (the leader
// needs them, and holds the same ones in its own upload) and are the
// AEAD's associated data, so the leader cannot move a sealed share to
// another report. The sealed transport's frames carry one too (sealed.go),
// sealed to the server receiving it under another info string.
type sealedUpload struct {
	Dataset    string
	Report     payload.ReportID
	Enc        []byte // HPKE encapsulated key
	Ciphertext []byte // sealed protocol.Encode(helper's Upload)
}

// relayedReport is what a party sends the leader in relay mode: the
// leader's encoded upload and the helper's sealed one.
type relayedReport struct {
	Leader []byte
	Helper sealedUpload
}

func (s *sealedUpload) encode(w *wire.Writer) {
	w.String(s.Dataset)
	w.Fixed(s.Report[:])
	w.Blob(s.Enc)
	w.Blob(s.Ciphertext)
}

func (s *sealedUpload) decode(r *wire.Reader) {
	s.Dataset = r.String("dataset", protocol.MaxNameLen)
	r.Fixed("report", s.Report[:])
	s.Enc = r.Blob("encapsulated key", maxEncLen)
	s.Ciphertext = r.Blob("ciphertext", maxCiphertextLen)
}

// marshal returns the version byte and the fields of s.
func (s *sealedUpload) marshal() []byte {
	var w wire.Writer
	w.Uint8(relayVersion)
	s.encode(&w)
	return w.Bytes()
}

// parseSealedUpload decodes a sealed upload relayed by the leader; its
// errors match protocol.ErrMalformed.
func parseSealedUpload(b []byte) (*sealedUpload, error) {
	s, err := decodeSealedUpload(b)
	return s, protocol.Malformed(err)
}

func decodeSealedUpload(b []byte) (*sealedUpload, error) {
	var s sealedUpload
	r := wire.NewReader(b)
	if err := readRelayVersion(r); err != nil {
		return nil, fmt.Errorf("sealed upload: %w", err)
	}
	s.decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("sealed upload: %w", err)
	}
	return &s, nil
}

func (rr *relayedReport) marshal() []byte {
	var w wire.Writer
	w.Uint8(relayVersion)
	w.Blob(rr.Leader)
	rr.Helper.encode(&w)
	return w.Bytes()
}

// parseRelayedReport decodes a party's relayed report and checks that
// the leader's upload is for the same dataset and report as the sealed
// one. Its errors match protocol.ErrMalformed.
func parseRelayedReport(b []byte) (*relayedReport, error) {
	rr, err := decodeRelayedReport(b)
	return rr, protocol.Malformed(err)
}

func decodeRelayedReport(b []byte) (*relayedReport, error) {
	var rr relayedReport
	r := wire.NewReader(b)
	if err := readRelayVersion(r); err != nil {
		return nil, fmt.Errorf("relayed report: %w", err)
	}
	rr.Leader = r.Blob("leader upload", protocol.MaxKeySize+protocol.MaxNameLen+64)
	rr.Helper.decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("relayed report: %w", err)
	}
	msg, err := protocol.Decode(rr.Leader)
	if err != nil {
		return nil, fmt.Errorf("relayed report: leader upload: %w", err)
	}
	up, ok := msg.(*protocol.Upload)
	switch {
	case !ok:
		return nil, fmt.Errorf("relayed report: the leader's part is a %T, not an upload", msg)
	case up.Dataset != rr.Helper.Dataset || up.Report != rr.Helper.Report:
		return nil, fmt.Errorf("relayed report: the leader's upload is report %v of %q, the sealed one report %v of %q", up.Report, up.Dataset, rr.Helper.Report, rr.Helper.Dataset)
	}
	return &rr, nil
}

func readRelayVersion(r *wire.Reader) error {
	if v := r.Uint8("version"); r.Err() == nil && v != relayVersion {
		return fmt.Errorf("version %d is not supported (want %d)", v, relayVersion)
	}
	return r.Err()
}

// sealAAD is the associated data of a sealed upload: its dataset and
// report ID.
func sealAAD(dataset string, report payload.ReportID) []byte {
	var w wire.Writer
	w.String(dataset)
	w.Fixed(report[:])
	return w.Bytes()
}

// sealUpload seals the helper's upload to the helper's HPKE public key.
func sealUpload(helperPublic []byte, up *protocol.Upload) (*sealedUpload, error) {
	s, _, err := seal(rand.Reader, helperPublic, relayInfo, up.Dataset, up.Report, protocol.Encode(up))
	if err != nil {
		return nil, fmt.Errorf("sealing report %v to the helper: %w", up.Report, err)
	}
	return s, nil
}

// seal seals plaintext, the upload of report to dataset or a report
// carrying it, to the HPKE public key under the info string (which binds
// it to its use), with the dataset and report ID as associated data,
// drawing the ephemeral key from rnd. It also returns the sender's
// exported secret for the acknowledgement's MAC (ackLabel), a key only
// the holder of the private key shares.
func seal(rnd io.Reader, public []byte, info, dataset string, report payload.ReportID, plaintext []byte) (*sealedUpload, []byte, error) {
	pk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(public)
	if err != nil {
		return nil, nil, fmt.Errorf("the server's HPKE public key: %w", err)
	}
	sender, err := manifest.HPKESuite.NewSender(pk, []byte(info))
	if err != nil {
		return nil, nil, err
	}
	enc, sealer, err := sender.Setup(rnd)
	if err != nil {
		return nil, nil, err
	}
	ct, err := sealer.Seal(plaintext, sealAAD(dataset, report))
	if err != nil {
		return nil, nil, err
	}
	return &sealedUpload{Dataset: dataset, Report: report, Enc: enc, Ciphertext: ct}, sealer.Export([]byte(ackLabel), ackKeyLen), nil
}

// open decrypts s with the helper's HPKE private key and returns the
// encoded upload, checked to be the report s names.
func (s *sealedUpload) open(helperPrivate kem.PrivateKey) ([]byte, error) {
	pt, _, err := s.openWith(helperPrivate, relayInfo)
	if err != nil {
		return nil, err
	}
	return pt, s.checkUpload(pt)
}

// openWith decrypts s with an HPKE private key under the info string
// it was sealed with, and returns the plaintext and the receiver's
// exported secret for the acknowledgement's MAC (seal's).
func (s *sealedUpload) openWith(private kem.PrivateKey, info string) (plaintext, ackKey []byte, err error) {
	receiver, err := manifest.HPKESuite.NewReceiver(private, []byte(info))
	if err != nil {
		return nil, nil, err
	}
	opener, err := receiver.Setup(s.Enc)
	if err != nil {
		return nil, nil, fmt.Errorf("sealed report %v: encapsulated key: %w", s.Report, err)
	}
	pt, err := opener.Open(s.Ciphertext, sealAAD(s.Dataset, s.Report))
	if err != nil {
		return nil, nil, fmt.Errorf("sealed report %v %w (tampered, or sealed to another key): %w", s.Report, ErrUnsealable, err)
	}
	return pt, opener.Export([]byte(ackLabel), ackKeyLen), nil
}

// checkUpload checks that pt is the encoded upload of the report s
// names.
func (s *sealedUpload) checkUpload(pt []byte) error {
	msg, err := protocol.Decode(pt)
	if err != nil {
		return fmt.Errorf("sealed report %v: %w", s.Report, err)
	}
	if up, ok := msg.(*protocol.Upload); !ok || up.Dataset != s.Dataset || up.Report != s.Report {
		return fmt.Errorf("sealed report %v of %q holds another message or report", s.Report, s.Dataset)
	}
	return nil
}

// sendRelayed uploads r through the leader: its own key in the clear
// (over Noise, or within the frame sealed to the leader when the
// manifest gives the leader an upload address), the helper's sealed to
// the helper. The leader answers once both servers have made the report
// durable.
func (p *Party) sendRelayed(ctx context.Context, r *Report) (dup bool, err error) {
	sealed, err := sealUpload(p.m.Helper.HPKEPublicKey, r.Helper)
	if err != nil {
		return false, err
	}
	rr := (&relayedReport{Leader: protocol.Encode(r.Leader), Helper: *sealed}).marshal()
	call := func() (*protocol.Ack, error) {
		resp, err := p.host.Conn(p2p.RelayProtocol).Call(ctx, manifest.LeaderName, rr)
		if err != nil {
			return nil, err
		}
		return decodeAck(manifest.LeaderName, resp)
	}
	if e := p.m.Leader; e.UploadAddr != "" {
		sc, err := newSealedCall(rand.Reader, e, manifest.LeaderName, frameRelayed, r.ID, p.m.Dataset, rr)
		if err != nil {
			return false, err
		}
		call = func() (*protocol.Ack, error) { return p.callSealed(ctx, sc) }
	}
	var ack *protocol.Ack
	// The leader holds its share once it answers that the relay failed:
	// retry the relay (the leader drops its duplicate) within the window.
	err = p2p.Retry(ctx, p.tc, func() error {
		ack, err = call()
		return err
	}, func(err error) bool { return errors.Is(err, ErrRelayFailed) }, "report", r.ID.String())
	switch {
	case errors.Is(err, ErrRelayFailed):
		return false, &UploadError{Report: r.ID, Held: HeldByLeader, Failed: []ServerError{{Server: manifest.HelperName, Err: err}}}
	case err != nil:
		return false, fmt.Errorf("report %v: relayed upload to the leader: %w", r.ID, err)
	}
	return ack.Duplicate, nil
}

// decodeAck returns the Ack in resp from peer, or the error it carries
// as a *protocol.RemoteError (matching the sentinels it wraps).
func decodeAck(peer transport.PeerID, resp []byte) (*protocol.Ack, error) {
	msg, err := protocol.Decode(resp)
	if err != nil {
		return nil, err
	}
	switch m := msg.(type) {
	case *protocol.Ack:
		return m, nil
	case *protocol.Error:
		return nil, m.Remote(peer)
	}
	return nil, fmt.Errorf("unexpected %T response", msg)
}

// handleRelayed is the leader's side of a relayed report: it stores its
// own upload as a direct one, relays the sealed share to the helper, and
// acknowledges only when both servers have stored the report.
func (s *Server) handleRelayed(ctx context.Context, from transport.PeerID, req []byte) []byte {
	rr, err := parseRelayedReport(req)
	if err != nil {
		return s.refuseReport(from, "", err.Error())
	}
	return s.relay(ctx, from, rr)
}

// relay stores the leader's upload of rr, relays the helper's sealed
// one and returns the acknowledgement of both, or why not.
func (s *Server) relay(ctx context.Context, from transport.PeerID, rr *relayedReport) []byte {
	resp := s.handleReport(ctx, from, rr.Leader)
	mine, err := decodeAck(s.name, resp)
	if err != nil {
		return resp
	}
	helperResp, err := s.host.Conn(p2p.SealedProtocol).Call(ctx, manifest.HelperName, rr.Helper.marshal())
	if err != nil {
		s.log.Warn("relayed report held by the leader only: cannot reach the helper", "report", rr.Helper.Report.String(), "err", err)
		return errorResponse("%s: report %v: %w: %w", s.name, rr.Helper.Report, ErrRelayFailed, err)
	}
	theirs, err := decodeAck(manifest.HelperName, helperResp)
	if err != nil {
		s.log.Warn("relayed report held by the leader only: the helper refused it", "report", rr.Helper.Report.String(), "err", err)
		return errorResponse("%s: report %v: the helper refused it: %w", s.name, rr.Helper.Report, err)
	}
	return protocol.Encode(&protocol.Ack{Duplicate: mine.Duplicate || theirs.Duplicate})
}

// handleSealed is the helper's side: it opens the sealed upload with its
// HPKE private key and accepts it as a direct one.
func (s *Server) handleSealed(ctx context.Context, from transport.PeerID, req []byte) []byte {
	sealed, err := parseSealedUpload(req)
	if err != nil {
		return s.refuseReport(from, "", err.Error())
	}
	upload, err := sealed.open(s.hpkeKey)
	if err != nil {
		return s.refuseReport(from, sealed.Report.String(), err.Error())
	}
	return s.handleReport(ctx, from, upload)
}
