package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// A kind is one Writer/Reader method pair. Variable-length kinds take a
// cap on their element count.
type kind struct {
	write    func(w *Writer, v any)
	read     func(r *Reader, field string, max int) any
	variable bool
}

var kinds = map[string]kind{
	"Uint8": {
		func(w *Writer, v any) { w.Uint8(v.(uint8)) },
		func(r *Reader, f string, _ int) any { return r.Uint8(f) }, false},
	"Uint32": {
		func(w *Writer, v any) { w.Uint32(v.(uint32)) },
		func(r *Reader, f string, _ int) any { return r.Uint32(f) }, false},
	"Uint64": {
		func(w *Writer, v any) { w.Uint64(v.(uint64)) },
		func(r *Reader, f string, _ int) any { return r.Uint64(f) }, false},
	"Float64": {
		func(w *Writer, v any) { w.Float64(v.(float64)) },
		func(r *Reader, f string, _ int) any { return r.Float64(f) }, false},
	"Fixed": {
		func(w *Writer, v any) { b := v.([4]byte); w.Fixed(b[:]) },
		func(r *Reader, f string, _ int) any { var b [4]byte; r.Fixed(f, b[:]); return b }, false},
	"Blob": {
		func(w *Writer, v any) { w.Blob(v.([]byte)) },
		func(r *Reader, f string, max int) any { return r.Blob(f, max) }, true},
	"String": {
		func(w *Writer, v any) { w.String(v.(string)) },
		func(r *Reader, f string, max int) any { return r.String(f, max) }, true},
	"Uint64s": {
		func(w *Writer, v any) { w.Uint64s(v.([]uint64)) },
		func(r *Reader, f string, max int) any { return r.Uint64s(f, max) }, true},
	"Uint32s": {
		func(w *Writer, v any) { w.Uint32s(v.([]uint32)) },
		func(r *Reader, f string, max int) any { return r.Uint32s(f, max) }, true},
}

// kindNames orders kinds for the fuzz schema.
var kindNames = []string{"Uint8", "Uint32", "Uint64", "Float64", "Fixed", "Blob", "String", "Uint64s", "Uint32s"}

// A fieldCase is a value of a kind and its exact encoding.
type fieldCase struct {
	name string
	kind string
	v    any
	enc  []byte
}

func fieldCases() []fieldCase {
	return []fieldCase{
		{"uint8", "Uint8", uint8(0xab), []byte{0xab}},
		{"uint32", "Uint32", uint32(0x01020304), []byte{4, 3, 2, 1}},
		{"uint32 max", "Uint32", uint32(math.MaxUint32), []byte{0xff, 0xff, 0xff, 0xff}},
		{"uint64", "Uint64", uint64(0x0102030405060708), []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{"float64", "Float64", 1.5, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{"float64 -inf", "Float64", math.Inf(-1), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0xff}},
		{"fixed", "Fixed", [4]byte{9, 8, 7, 6}, []byte{9, 8, 7, 6}},
		{"blob", "Blob", []byte{5, 6, 7}, []byte{3, 0, 0, 0, 5, 6, 7}},
		{"empty blob", "Blob", []byte(nil), []byte{0, 0, 0, 0}},
		{"string", "String", "héllo", []byte{6, 0, 0, 0, 'h', 0xc3, 0xa9, 'l', 'l', 'o'}},
		{"empty string", "String", "", []byte{0, 0, 0, 0}},
		{"uint64s", "Uint64s", []uint64{1, 1 << 63}, []byte{2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"empty uint64s", "Uint64s", []uint64{}, []byte{0, 0, 0, 0}},
		{"uint32s", "Uint32s", []uint32{7, 0x01020304}, []byte{2, 0, 0, 0, 7, 0, 0, 0, 4, 3, 2, 1}},
	}
}

// elems is the length of a variable-length value (0 for fixed-width).
func (c fieldCase) elems() int {
	if !kinds[c.kind].variable {
		return 0
	}
	return reflect.ValueOf(c.v).Len()
}

// read decodes c's field from b with a cap of max elements.
func (c fieldCase) read(b []byte, max int) (any, *Reader) {
	r := NewReader(b)
	return kinds[c.kind].read(r, c.name, max), r
}

func TestWriterEncoding(t *testing.T) {
	for _, c := range fieldCases() {
		t.Run(c.name, func(t *testing.T) {
			var w Writer
			kinds[c.kind].write(&w, c.v)
			if !bytes.Equal(w.Bytes(), c.enc) {
				t.Errorf("encoding % x, want % x", w.Bytes(), c.enc)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range fieldCases() {
		t.Run(c.name, func(t *testing.T) {
			got, r := c.read(c.enc, c.elems())
			if err := r.Finish(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.v) {
				t.Errorf("decoded %#v, want %#v", got, c.v)
			}
		})
	}
}

// TestSequence reads every field back from one message.
func TestSequence(t *testing.T) {
	var w Writer
	for _, c := range fieldCases() {
		kinds[c.kind].write(&w, c.v)
	}
	r := NewReader(w.Bytes())
	for _, c := range fieldCases() {
		if got := kinds[c.kind].read(r, c.name, c.elems()); !reflect.DeepEqual(got, c.v) {
			t.Errorf("%s: decoded %#v, want %#v", c.name, got, c.v)
		}
	}
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestTruncated cuts every encoding at every byte: the read fails with
// ErrTruncated naming the field and returns the zero value.
func TestTruncated(t *testing.T) {
	for _, c := range fieldCases() {
		t.Run(c.name, func(t *testing.T) {
			for k := range len(c.enc) {
				got, r := c.read(c.enc[:k], c.elems())
				err := r.Err()
				if !errors.Is(err, ErrTruncated) || !strings.HasPrefix(err.Error(), c.name+": ") {
					t.Fatalf("cut at %d: error %v, want %q naming the field", k, err, ErrTruncated)
				}
				if !reflect.ValueOf(got).IsZero() {
					t.Errorf("cut at %d: decoded %#v, want the zero value", k, got)
				}
				if r.Finish() != err {
					t.Errorf("cut at %d: Finish returned %v, want the first error", k, r.Finish())
				}
			}
		})
	}
}

// TestLengthCap decodes each variable-length field with a cap one below
// its length.
func TestLengthCap(t *testing.T) {
	for _, c := range fieldCases() {
		n := c.elems()
		if n == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			got, r := c.read(c.enc, n-1)
			err := r.Err()
			want := fmt.Sprintf("%s: length %d exceeds the limit %d", c.name, n, n-1)
			if !errors.Is(err, ErrTooLong) || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if !reflect.ValueOf(got).IsZero() {
				t.Errorf("decoded %#v, want the zero value", got)
			}
		})
	}
}

// TestHostileLength: a length of 2^32−1 under a loose cap fails as
// truncated (and does not allocate for it).
func TestHostileLength(t *testing.T) {
	for _, name := range kindNames {
		if !kinds[name].variable {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := NewReader([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
			if v := kinds[name].read(r, "v", math.MaxInt); !errors.Is(r.Err(), ErrTruncated) || !reflect.ValueOf(v).IsZero() {
				t.Errorf("decoded %#v, error %v, want %q", v, r.Err(), ErrTruncated)
			}
		})
	}
}

func TestFinishRefusesTrailingBytes(t *testing.T) {
	for _, c := range fieldCases() {
		t.Run(c.name, func(t *testing.T) {
			got, r := c.read(append(bytes.Clone(c.enc), 0, 0), c.elems())
			if r.Err() != nil || !reflect.DeepEqual(got, c.v) {
				t.Fatalf("decoded %#v, %v before Finish", got, r.Err())
			}
			err := r.Finish()
			if !errors.Is(err, ErrTrailing) || err.Error() != "2 trailing bytes after the message" {
				t.Errorf("Finish: %v, want 2 trailing bytes", err)
			}
		})
	}
}

// TestFirstErrorSticks: after a failure every read returns zero values
// and Err, Finish and Fail keep the first error.
func TestFirstErrorSticks(t *testing.T) {
	r := NewReader([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	if got := r.Uint32("a"); got != 0x04030201 {
		t.Fatalf("a = %#x", got)
	}
	r.Uint64("b")
	first := r.Err()
	if !errors.Is(first, ErrTruncated) || !strings.HasPrefix(first.Error(), "b: ") {
		t.Fatalf("error %v, want b truncated", first)
	}
	if got := r.Uint8("c"); got != 0 {
		t.Errorf("read after an error: %d, want 0", got)
	}
	r.Fail(errors.New("later"))
	if r.Err() != first || r.Finish() != first {
		t.Errorf("error %v, want the first %v", r.Err(), first)
	}
}

func TestFail(t *testing.T) {
	r := NewReader([]byte{1})
	bad := errors.New("value out of range")
	r.Fail(bad)
	if r.Uint8("x") != 0 || r.Finish() != bad {
		t.Errorf("after Fail: error %v, want %v", r.Finish(), bad)
	}
}

// TestReadsCopy: decoded blobs and fixed fields do not alias the input.
func TestReadsCopy(t *testing.T) {
	in := []byte{2, 0, 0, 0, 1, 2, 3, 4}
	r := NewReader(in)
	blob := r.Blob("blob", 2)
	var fixed [2]byte
	r.Fixed("fixed", fixed[:])
	in[4], in[6] = 9, 9
	if !bytes.Equal(blob, []byte{1, 2}) || fixed != [2]byte{3, 4} {
		t.Errorf("blob %v, fixed %v changed with the input", blob, fixed)
	}
}

// FuzzReader decodes arbitrary bytes under a schema of field kinds. It
// must not panic; every error is one of the sentinels and names a field;
// every accepted input is the unique encoding of what it decodes to.
func FuzzReader(f *testing.F) {
	for i, c := range fieldCases() {
		f.Add([]byte{byte(i % len(kindNames))}, c.enc)
	}
	f.Add([]byte{5, 6, 7, 8}, []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{0, 1, 2, 3, 4}, make([]byte, 25))
	f.Fuzz(func(t *testing.T, schema, data []byte) {
		if len(schema) > 32 {
			schema = schema[:32]
		}
		const max = 64
		r := NewReader(data)
		var w Writer
		for i, op := range schema {
			k := kinds[kindNames[int(op)%len(kindNames)]]
			v := k.read(r, fmt.Sprintf("field %d", i), max)
			if k.variable && reflect.ValueOf(v).Len() > max {
				t.Fatalf("field %d: %d elements exceed the cap %d", i, reflect.ValueOf(v).Len(), max)
			}
			k.write(&w, v)
		}
		err := r.Finish()
		switch {
		case err == nil:
			if !bytes.Equal(w.Bytes(), data) {
				t.Fatalf("re-encoding % x differs from the accepted % x", w.Bytes(), data)
			}
		case errors.Is(err, ErrTrailing):
		case errors.Is(err, ErrTruncated), errors.Is(err, ErrTooLong):
			if !strings.HasPrefix(err.Error(), "field ") {
				t.Fatalf("error %q names no field", err)
			}
		default:
			t.Fatalf("error %v is none of the sentinels", err)
		}
	})
}
