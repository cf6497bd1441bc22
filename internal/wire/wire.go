// Package wire is the binary encoding of fedecdf protocol messages.
//
// It is a small append-only Writer and a bounds-checked Reader whose
// every variable-length field carries an explicit cap, so that a
// decoder fed hostile bytes fails with an error naming the field
// instead of allocating without limit or panicking.
//
// Integers are fixed-width little-endian; byte strings, strings and
// vectors are prefixed by their length as a uint32.
package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Writer appends encoded fields to a byte slice.
type Writer struct {
	buf []byte
}

// Bytes returns the encoding written so far.
func (w *Writer) Bytes() []byte { return w.buf }

// Uint8 appends one byte.
func (w *Writer) Uint8(v uint8) { w.buf = append(w.buf, v) }

// Uint32 appends v little-endian.
func (w *Writer) Uint32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }

// Uint64 appends v little-endian.
func (w *Writer) Uint64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

// Float64 appends the IEEE 754 bits of v.
func (w *Writer) Float64(v float64) { w.Uint64(math.Float64bits(v)) }

// Fixed appends b without a length (for fixed-size identifiers).
func (w *Writer) Fixed(b []byte) { w.buf = append(w.buf, b...) }

// Blob appends len(b) and b.
func (w *Writer) Blob(b []byte) {
	w.Uint32(uint32(len(b)))
	w.buf = append(w.buf, b...)
}

// String appends len(s) and s.
func (w *Writer) String(s string) {
	w.Uint32(uint32(len(s)))
	w.buf = append(w.buf, s...)
}

// Uint64s appends len(v) and each element.
func (w *Writer) Uint64s(v []uint64) {
	w.Uint32(uint32(len(v)))
	for _, x := range v {
		w.Uint64(x)
	}
}

// Uint32s appends len(v) and each element.
func (w *Writer) Uint32s(v []uint32) {
	w.Uint32(uint32(len(v)))
	for _, x := range v {
		w.Uint32(x)
	}
}

// Reader decodes fields from a byte slice. The first failure is kept and
// every later read returns zero values, so a decoder reads all its fields
// and checks Err (or Finish) once.
type Reader struct {
	buf []byte
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Err returns the first decoding error.
func (r *Reader) Err() error { return r.err }

// Finish returns the first decoding error, or an error if bytes remain.
func (r *Reader) Finish() error {
	if r.err == nil && len(r.buf) != 0 {
		r.err = fmt.Errorf("%d %w", len(r.buf), ErrTrailing)
	}
	return r.err
}

func (r *Reader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf) {
		r.err = fmt.Errorf("%s: %w (need %d bytes, have %d)", field, ErrTruncated, n, len(r.buf))
		return nil
	}
	b := r.buf[:n:n]
	r.buf = r.buf[n:]
	return b
}

// Uint8 reads one byte.
func (r *Reader) Uint8(field string) uint8 {
	if b := r.take(field, 1); b != nil {
		return b[0]
	}
	return 0
}

// Uint32 reads a little-endian uint32.
func (r *Reader) Uint32(field string) uint32 {
	if b := r.take(field, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Uint64 reads a little-endian uint64.
func (r *Reader) Uint64(field string) uint64 {
	if b := r.take(field, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Float64 reads IEEE 754 bits.
func (r *Reader) Float64(field string) float64 { return math.Float64frombits(r.Uint64(field)) }

// Fixed copies len(dst) bytes into dst.
func (r *Reader) Fixed(field string, dst []byte) { copy(dst, r.take(field, len(dst))) }

// length reads a uint32 length and checks it against max elements.
func (r *Reader) length(field string, max int) int {
	n := r.Uint32(field)
	if r.err == nil && uint64(n) > uint64(max) {
		r.err = fmt.Errorf("%s: length %d %w %d", field, n, ErrTooLong, max)
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// Blob reads a length-prefixed byte string of at most max bytes (a copy).
func (r *Reader) Blob(field string, max int) []byte {
	n := r.length(field, max)
	b := r.take(field, n)
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// String reads a length-prefixed string of at most max bytes.
func (r *Reader) String(field string, max int) string {
	n := r.length(field, max)
	return string(r.take(field, n))
}

// Uint64s reads a length-prefixed vector of at most max elements.
func (r *Reader) Uint64s(field string, max int) []uint64 {
	n := r.length(field, max)
	b := r.take(field, 8*n)
	if b == nil {
		return nil
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

// Uint32s reads a length-prefixed vector of at most max elements.
func (r *Reader) Uint32s(field string, max int) []uint32 {
	n := r.length(field, max)
	b := r.take(field, 4*n)
	if b == nil {
		return nil
	}
	v := make([]uint32, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// Fail records err as the decoding error unless one is already recorded:
// decoders use it for semantic checks (a value out of range).
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
