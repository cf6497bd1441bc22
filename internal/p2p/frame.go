package p2p

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/fedecdf/fedecdf/internal/transport"
)

// FrameVersion is the first byte of every frame on a fedecdf stream.
const FrameVersion = 1

// Frame kinds: the second byte of a frame.
const (
	frameMessage byte = 0 // a request or a response
	frameRefusal byte = 1 // the callee refused the caller; the payload says why
)

// frameHeaderLen is the size of version, kind and payload length.
const frameHeaderLen = 6

// maxRefusalLen caps the reason text of a refusal.
const maxRefusalLen = 1024

// writeFrame writes one frame: version, kind, big-endian uint32 length,
// payload.
func writeFrame(w io.Writer, kind byte, payload []byte, maxLen int) error {
	if len(payload) > maxLen {
		return fmt.Errorf("p2p: message of %d bytes exceeds the limit %d", len(payload), maxLen)
	}
	b := make([]byte, frameHeaderLen, frameHeaderLen+len(payload))
	b[0], b[1] = FrameVersion, kind
	binary.BigEndian.PutUint32(b[2:], uint32(len(payload)))
	_, err := w.Write(append(b, payload...))
	return err
}

// readFrame reads one frame whose payload is at most maxLen bytes. The
// payload is read incrementally, so a peer announcing a large frame and
// sending nothing makes the reader allocate nothing beyond what arrives.
func readFrame(r io.Reader, maxLen int) (kind byte, payload []byte, err error) {
	var h [frameHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, fmt.Errorf("p2p: reading frame header: %w", err)
	}
	if h[0] != FrameVersion {
		return 0, nil, fmt.Errorf("p2p: frame version %d is not supported (want %d)", h[0], FrameVersion)
	}
	kind = h[1]
	limit := maxLen
	switch kind {
	case frameMessage:
	case frameRefusal:
		limit = min(maxLen, maxRefusalLen)
	default:
		return 0, nil, fmt.Errorf("p2p: unknown frame kind %d", kind)
	}
	n := binary.BigEndian.Uint32(h[2:])
	if uint64(n) > uint64(limit) {
		return 0, nil, fmt.Errorf("p2p: frame of %d bytes exceeds the limit %d", n, limit)
	}
	payload, err = io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return 0, nil, fmt.Errorf("p2p: reading a %d-byte frame: %w", n, err)
	}
	if len(payload) != int(n) {
		return 0, nil, fmt.Errorf("p2p: frame truncated after %d of %d bytes: %w", len(payload), n, io.ErrUnexpectedEOF)
	}
	return kind, payload, nil
}

// RefusedError is returned by Call when the callee refused the caller
// (an unknown or unauthorised peer for that protocol). It is final: Call
// does not retry it.
type RefusedError struct {
	Peer   string // the callee
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("p2p: %s refused the call: %s", e.Peer, e.Reason)
}

// Is reports that a refusal matches transport.ErrNotDelivered: the
// callee refused the caller before its handler saw the request.
func (e *RefusedError) Is(target error) bool { return target == transport.ErrNotDelivered }

// IsRefused reports whether err is (or wraps) a RefusedError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}
