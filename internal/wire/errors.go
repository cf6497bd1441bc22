package wire

import "errors"

// The kinds of decoding failure a Reader reports. Each error a Reader
// returns wraps one of these (errors.Is) and names the field.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("truncated")
	// ErrTooLong: a length prefix exceeds the field's cap.
	ErrTooLong = errors.New("exceeds the limit")
	// ErrTrailing: bytes remain after the last field (Finish).
	ErrTrailing = errors.New("trailing bytes after the message")
)
