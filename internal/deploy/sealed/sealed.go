package sealed

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// FrameVersion is the first byte of every frame of the sealed
// upload transport; changing the frames' layout, the HPKE info strings
// or the MAC bumps it (TestSealedFrameKnownAnswer).
const FrameVersion = 1

// The kinds of a sealed-transport frame, its second byte.
const (
	FrameUpload  byte = 1 // party → server: a sealed protocol.Upload
	FrameRelayed byte = 2 // party → leader: a sealed relayed report
	FrameAck     byte = 3 // server → party: the response and its MAC
	FrameRefusal byte = 4 // server → party: why the frame was not opened
)

// Info is the HPKE info string of each request kind: a frame
// opens only as the kind it was sealed as.
var Info = map[byte]string{
	FrameUpload:  "fedecdf sealed upload v1",
	FrameRelayed: "fedecdf sealed relayed report v1",
}

// ackLabel is the HPKE exporter context of the acknowledgement's MAC
// key, AckKeyLen its length.
const (
	ackLabel  = "fedecdf sealed ack v1"
	AckKeyLen = sha256.Size
)

// Limits of the frames: the header (version, kind, big-endian uint32
// length); an answer carries a protocol.Ack or Error and its MAC; a
// refusal's reason is cut to MaxRefusalLen.
const (
	HeaderLen     = 6
	MaxAnswerLen  = protocol.MaxTextLen + 64 + AckKeyLen
	MaxRefusalLen = 1024
)

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, kind byte, body []byte) error {
	b := make([]byte, HeaderLen, HeaderLen+len(body))
	b[0], b[1] = FrameVersion, kind
	binary.BigEndian.PutUint32(b[2:], uint32(len(body)))
	_, err := w.Write(append(b, body...))
	return err
}

// ReadFrame reads one frame of a kind in kinds whose body is at
// most maxLen bytes.
func ReadFrame(r io.Reader, maxLen int, kinds ...byte) (kind byte, body []byte, err error) {
	var h [HeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, fmt.Errorf("reading the frame header: %w", err)
	}
	if h[0] != FrameVersion {
		return 0, nil, fmt.Errorf("frame version %d is not supported (want %d)", h[0], FrameVersion)
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

// ParseRequest decodes the body of a party's frame: a sealed
// upload without the version byte (the frame's header has it).
func ParseRequest(body []byte) (*Upload, error) {
	var s Upload
	r := wire.NewReader(body)
	s.decode(r)
	if err := r.Finish(); err != nil {
		return nil, protocol.Malformed(fmt.Errorf("sealed frame: %w", err))
	}
	return &s, nil
}

// AckMAC is the MAC of an answer's body under the exported key.
func AckMAC(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte{FrameVersion, FrameAck})
	m.Write(body)
	return m.Sum(nil)
}

// AnswerBody is the body of an answer: the protocol response (an Ack
// or an Error) and its MAC.
func AnswerBody(key, resp []byte) []byte {
	var w wire.Writer
	w.Blob(resp)
	return append(w.Bytes(), AckMAC(key, w.Bytes())...)
}

// MaxFrame is the largest body of a valid request frame to a
// server of m: a relayed report (the largest kind) holds two uploads
// of upload bytes each; the dataset name, report IDs, encapsulated keys,
// AEAD tags and lengths around them take under 2 KiB.
func MaxFrame(upload int) int { return 2*upload + 2048 }

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

// Upload is the helper's upload of one report, HPKE-sealed to the
// helper. The dataset and report ID travel in the clear (the leader
// needs them, and holds the same ones in its own upload) and are the
// AEAD's associated data, so the leader cannot move a sealed share to
// another report. The sealed transport's frames carry one too (sealed.go),
// sealed to the server receiving it under another info string.
type Upload struct {
	Dataset    string
	Report     payload.ReportID
	Enc        []byte // HPKE encapsulated key
	Ciphertext []byte // sealed protocol.Encode(helper's Upload)
}

// RelayedReport is what a party sends the leader in relay mode: the
// leader's encoded upload and the helper's sealed one.
type RelayedReport struct {
	Leader []byte
	Helper Upload
}

// Encode writes the fields of s, without the version byte (a frame's
// body, or the helper's part of a relayed report).
func (s *Upload) Encode(w *wire.Writer) {
	w.String(s.Dataset)
	w.Fixed(s.Report[:])
	w.Blob(s.Enc)
	w.Blob(s.Ciphertext)
}

func (s *Upload) decode(r *wire.Reader) {
	s.Dataset = r.String("dataset", protocol.MaxNameLen)
	r.Fixed("report", s.Report[:])
	s.Enc = r.Blob("encapsulated key", maxEncLen)
	s.Ciphertext = r.Blob("ciphertext", maxCiphertextLen)
}

// marshal returns the version byte and the fields of s.
func (s *Upload) Marshal() []byte {
	var w wire.Writer
	w.Uint8(relayVersion)
	s.Encode(&w)
	return w.Bytes()
}

// ParseUpload decodes a sealed upload relayed by the leader; its
// errors match protocol.ErrMalformed.
func ParseUpload(b []byte) (*Upload, error) {
	s, err := decodeSealedUpload(b)
	return s, protocol.Malformed(err)
}

func decodeSealedUpload(b []byte) (*Upload, error) {
	var s Upload
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

// Marshal returns the version byte and the fields of rr.
func (rr *RelayedReport) Marshal() []byte {
	var w wire.Writer
	w.Uint8(relayVersion)
	w.Blob(rr.Leader)
	rr.Helper.Encode(&w)
	return w.Bytes()
}

// ParseRelayedReport decodes a party's relayed report and checks that
// the leader's upload is for the same dataset and report as the sealed
// one. Its errors match protocol.ErrMalformed.
func ParseRelayedReport(b []byte) (*RelayedReport, error) {
	rr, err := decodeRelayedReport(b)
	return rr, protocol.Malformed(err)
}

func decodeRelayedReport(b []byte) (*RelayedReport, error) {
	var rr RelayedReport
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

// SealUpload seals the helper's upload to the helper's HPKE public key.
func SealUpload(helperPublic []byte, up *protocol.Upload) (*Upload, error) {
	s, _, err := Seal(rand.Reader, helperPublic, relayInfo, up.Dataset, up.Report, protocol.Encode(up))
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
func Seal(rnd io.Reader, public []byte, info, dataset string, report payload.ReportID, plaintext []byte) (*Upload, []byte, error) {
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
	return &Upload{Dataset: dataset, Report: report, Enc: enc, Ciphertext: ct}, sealer.Export([]byte(ackLabel), AckKeyLen), nil
}

// open decrypts s with the helper's HPKE private key and returns the
// encoded upload, checked to be the report s names.
func (s *Upload) Open(helperPrivate kem.PrivateKey) ([]byte, error) {
	pt, _, err := s.OpenWith(helperPrivate, relayInfo)
	if err != nil {
		return nil, err
	}
	return pt, s.CheckUpload(pt)
}

// openWith decrypts s with an HPKE private key under the info string
// it was sealed with, and returns the plaintext and the receiver's
// exported secret for the acknowledgement's MAC (seal's).
func (s *Upload) OpenWith(private kem.PrivateKey, info string) (plaintext, ackKey []byte, err error) {
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
	return pt, opener.Export([]byte(ackLabel), AckKeyLen), nil
}

// checkUpload checks that pt is the encoded upload of the report s
// names.
func (s *Upload) CheckUpload(pt []byte) error {
	msg, err := protocol.Decode(pt)
	if err != nil {
		return fmt.Errorf("sealed report %v: %w", s.Report, err)
	}
	if up, ok := msg.(*protocol.Upload); !ok || up.Dataset != s.Dataset || up.Report != s.Report {
		return fmt.Errorf("sealed report %v of %q holds another message or report", s.Report, s.Dataset)
	}
	return nil
}

// DecodeAck returns the Ack in resp from peer, or the error it carries
// as a *protocol.RemoteError (matching the sentinels it wraps).
func DecodeAck(peer transport.PeerID, resp []byte) (*protocol.Ack, error) {
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
