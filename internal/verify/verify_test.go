package verify

import (
	"bytes"
	crand "crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"
)

var reportsFlag = flag.Int("verify.reports", 0,
	"reports per test: honest reports, and malformed reports of each kind (default 2000 and 50; issue 17 asks 10000)")

// reportCount is the -verify.reports flag if set, otherwise def.
func reportCount(def int) int {
	if *reportsFlag > 0 {
		return *reportsFlag
	}
	return def
}

// fixture is a scheme with its two servers sharing one key.
type fixture struct {
	s              *Scheme
	leader, helper *Server
}

func newFixture(t testing.TB, bins int) fixture {
	t.Helper()
	s, err := New(bins)
	if err != nil {
		t.Fatal(err)
	}
	var key [KeySize]byte
	crand.Read(key[:])
	l, err := s.NewServer(0, key)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.NewServer(1, key)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{s: s, leader: l, helper: h}
}

func (f fixture) encode(t testing.TB, bin int, label bool) Report {
	t.Helper()
	r, err := f.s.Encode(bin, label, crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// record is a party's plaintext record.
type record struct {
	bin   int
	label bool
}

func (r record) bucket(bins int) int {
	if r.label {
		return bins + r.bin
	}
	return r.bin
}

// leaderLayout splits the leader's input share into its measurement share,
// proof share and blind, as field elements.
func (f fixture) leaderLayout(t testing.TB, share []byte) (meas, proof fp128.Vec, blind []byte) {
	t.Helper()
	meas, proof, blind, err := f.s.splitLeader(share)
	if err != nil {
		t.Fatal(err)
	}
	return meas, proof, blind
}

func joinLeaderT(t testing.TB, meas, proof fp128.Vec, blind []byte) []byte {
	t.Helper()
	b, err := joinLeader(meas, proof, blind)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addAt returns the report with delta added to the leader's share of the
// given buckets: the sum of the shares then encodes the altered histogram.
func (f fixture) addAt(t testing.TB, r Report, delta map[int]int64) Report {
	t.Helper()
	r, err := f.s.addAt(r, delta)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// malformed lists the kinds of invalid report: each builds one from an
// honest report r of record rec, a second honest report o and a random
// source, and names the rejection both servers must give.
func (f fixture) malformed() []struct {
	name  string
	want  error
	build func(t testing.TB, r, o Report, rec record, rng *rand.Rand) Report
} {
	n := f.s.bins
	other := func(rec record, rng *rand.Rand) int {
		b := rng.IntN(2*n - 1)
		if b >= rec.bucket(n) {
			b++
		}
		return b
	}
	return []struct {
		name  string
		want  error
		build func(t testing.TB, r, o Report, rec record, rng *rand.Rand) Report
	}{
		{"two buckets", ErrMismatch, func(t testing.TB, r, _ Report, rec record, rng *rand.Rand) Report {
			return f.addAt(t, r, map[int]int64{other(rec, rng): 1})
		}},
		{"bucket value 2", ErrMismatch, func(t testing.TB, r, _ Report, rec record, _ *rand.Rand) Report {
			return f.addAt(t, r, map[int]int64{rec.bucket(n): 1})
		}},
		{"bucket value p-1", ErrMismatch, func(t testing.TB, r, _ Report, rec record, _ *rand.Rand) Report {
			return f.addAt(t, r, map[int]int64{rec.bucket(n): -2})
		}},
		{"p-1 and two ones, sum 1", ErrMismatch, func(t testing.TB, r, _ Report, rec record, rng *rand.Rand) Report {
			a, b := other(rec, rng), other(rec, rng)
			if a == b {
				return f.addAt(t, r, map[int]int64{rec.bucket(n): -2, a: 2})
			}
			return f.addAt(t, r, map[int]int64{rec.bucket(n): -2, a: 1, b: 1})
		}},
		{"all zero", ErrMismatch, func(t testing.TB, r, _ Report, rec record, _ *rand.Rand) Report {
			return f.addAt(t, r, map[int]int64{rec.bucket(n): -1})
		}},
		{"label and not-label", ErrMismatch, func(t testing.TB, r, _ Report, rec record, _ *rand.Rand) Report {
			return f.addAt(t, r, map[int]int64{(rec.bucket(n) + n) % (2 * n): 1})
		}},
		{"helper share of another report", ErrMismatch, func(_ testing.TB, r, o Report, _ record, _ *rand.Rand) Report {
			r.Shares[1] = o.Shares[1]
			return r
		}},
		{"leader share of another report", ErrMismatch, func(_ testing.TB, r, o Report, _ record, _ *rand.Rand) Report {
			r.Shares[0] = o.Shares[0]
			return r
		}},
		{"public share of another report", ErrMismatch, func(_ testing.TB, r, o Report, _ record, _ *rand.Rand) Report {
			r.Public = o.Public
			return r
		}},
		{"nonce of another report", ErrMismatch, func(_ testing.TB, r, o Report, _ record, _ *rand.Rand) Report {
			r.Nonce = o.Nonce
			return r
		}},
		{"proof copied from another report", ErrProof, func(t testing.TB, r, o Report, _ record, _ *rand.Rand) Report {
			meas, _, blind := f.leaderLayout(t, r.Shares[0])
			_, proof, _ := f.leaderLayout(t, o.Shares[0])
			r.Shares[0] = joinLeaderT(t, meas, proof, blind)
			return r
		}},
		{"random proof", ErrProof, func(t testing.TB, r, _ Report, _ record, rng *rand.Rand) Report {
			meas, proof, blind := f.leaderLayout(t, r.Shares[0])
			for i := range proof {
				if err := proof[i].SetUint64(rng.Uint64()); err != nil {
					t.Fatal(err)
				}
			}
			r.Shares[0] = joinLeaderT(t, meas, proof, blind)
			return r
		}},
		{"one proof element changed", ErrProof, func(t testing.TB, r, _ Report, _ record, rng *rand.Rand) Report {
			meas, proof, blind := f.leaderLayout(t, r.Shares[0])
			var one fp128.Fp
			one.SetOne()
			proof[rng.IntN(len(proof))].AddAssign(&one)
			r.Shares[0] = joinLeaderT(t, meas, proof, blind)
			return r
		}},
		{"truncated leader share", ErrMalformed, func(_ testing.TB, r, _ Report, _ record, rng *rand.Rand) Report {
			r.Shares[0] = r.Shares[0][:rng.IntN(len(r.Shares[0]))]
			return r
		}},
		{"truncated helper share", ErrMalformed, func(_ testing.TB, r, _ Report, _ record, rng *rand.Rand) Report {
			r.Shares[1] = r.Shares[1][:rng.IntN(len(r.Shares[1]))]
			return r
		}},
		{"random helper seeds", ErrMismatch, func(_ testing.TB, r, _ Report, _ record, rng *rand.Rand) Report {
			r.Shares[1] = bytes.Clone(r.Shares[1])
			for i := range r.Shares[1] {
				r.Shares[1][i] = byte(rng.Uint32())
			}
			return r
		}},
	}
}

// serverErrors runs each server's side of the protocol and returns each
// server's decision: a server whose Prepare fails sends no verifier
// message, and a server without its peer's message rejects.
func (f fixture) serverErrors(r Report) [2]error {
	srv := [2]*Server{f.leader, f.helper}
	var pend [2]*Pending
	var msg [2][]byte
	var errs [2]error
	for i := range srv {
		pend[i], msg[i], errs[i] = srv[i].Prepare(r.Nonce, r.Public, r.Shares[i])
	}
	for i := range srv {
		switch {
		case errs[i] != nil:
		case errs[1-i] != nil:
			errs[i] = errs[1-i]
		default:
			_, errs[i] = srv[i].Finish(pend[i], msg[1-i])
		}
	}
	return errs
}

func randomRecord(rng *rand.Rand, bins int) record {
	return record{bin: rng.IntN(bins), label: rng.IntN(2) == 1}
}

func TestInvalidReportsRejectedAtBothServers(t *testing.T) {
	const bins = 16
	perKind := reportCount(50)
	f := newFixture(t, bins)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range f.malformed() {
		t.Run(k.name, func(t *testing.T) {
			for range perKind {
				rec := randomRecord(rng, bins)
				r := f.encode(t, rec.bin, rec.label)
				o := f.encode(t, rng.IntN(bins), rng.IntN(2) == 1)
				bad := k.build(t, r, o, rec, rng)
				errs := f.serverErrors(bad)
				for i, err := range errs {
					if !errors.Is(err, k.want) {
						t.Fatalf("server %d: error %v, want %v", i, err, k.want)
					}
				}
				if _, err := VerifyPair(f.leader, f.helper, bad); !errors.Is(err, k.want) {
					t.Fatalf("VerifyPair: error %v, want %v", err, k.want)
				}
			}
		})
	}
}

func TestDifferentKeysRejectHonestReport(t *testing.T) {
	f := newFixture(t, 8)
	var key [KeySize]byte
	crand.Read(key[:])
	h, err := f.s.NewServer(1, key)
	if err != nil {
		t.Fatal(err)
	}
	r := f.encode(t, 3, true)
	if _, err := VerifyPair(f.leader, h, r); !errors.Is(err, ErrProof) {
		t.Fatalf("error %v, want %v", err, ErrProof)
	}
}

// verifyAll verifies reports in process and returns both aggregates and
// the rejections per reason.
func (f fixture) verifyAll(t testing.TB, reports []Report) ([2]*Aggregate, map[string]int) {
	t.Helper()
	agg := [2]*Aggregate{f.s.NewAggregate(), f.s.NewAggregate()}
	rejected := map[string]int{}
	for _, r := range reports {
		outs, err := VerifyPair(f.leader, f.helper, r)
		if err == nil {
			for i := range agg {
				if err = agg[i].Add(r.Nonce, outs[i]); err != nil {
					break
				}
			}
		}
		if err != nil {
			rejected[Reason(err)]++
		}
	}
	return agg, rejected
}

// plainPrefixes is the prefix vectors of count, label, 1 − label in the clear.
func plainPrefixes(recs []record, bins int) [3][]uint64 {
	var p [3][]uint64
	for c := range p {
		p[c] = make([]uint64, bins)
	}
	for _, r := range recs {
		for i := r.bin; i < bins; i++ {
			p[0][i]++
			if r.label {
				p[1][i]++
			} else {
				p[2][i]++
			}
		}
	}
	return p
}

func reveal(t testing.TB, agg [2]*Aggregate) [3][]uint64 {
	t.Helper()
	var a, b Prefixes
	var err error
	if a, err = agg[0].Prefixes(); err != nil {
		t.Fatal(err)
	}
	if b, err = agg[1].Prefixes(); err != nil {
		t.Fatal(err)
	}
	var out [3][]uint64
	for c, pair := range [3][2]fp128.Vec{{a.Count, b.Count}, {a.Label, b.Label}, {a.NotLabel, b.NotLabel}} {
		if out[c], err = Reveal(pair[0], pair[1]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestHonestReportsAllAccepted(t *testing.T) {
	const bins = 32
	n := reportCount(2000)
	f := newFixture(t, bins)
	rng := rand.New(rand.NewPCG(3, 4))
	recs := make([]record, n)
	reports := make([]Report, n)
	for i := range recs {
		recs[i] = randomRecord(rng, bins)
		reports[i] = f.encode(t, recs[i].bin, recs[i].label)
	}
	agg, rejected := f.verifyAll(t, reports)
	if len(rejected) != 0 || agg[0].Len() != n || agg[1].Len() != n {
		t.Fatalf("rejected %v, counted %d and %d of %d", rejected, agg[0].Len(), agg[1].Len(), n)
	}
	if got, want := reveal(t, agg), plainPrefixes(recs, bins); !equalPrefixes(got, want) {
		t.Fatalf("prefixes %v, want %v", got, want)
	}
}

func equalPrefixes(a, b [3][]uint64) bool {
	for c := range a {
		if !slices.Equal(a[c], b[c]) {
			return false
		}
	}
	return true
}

func TestMaliciousReportsDoNotMoveTheSum(t *testing.T) {
	const bins, honest = 16, 300
	f := newFixture(t, bins)
	rng := rand.New(rand.NewPCG(5, 6))
	kinds := f.malformed()
	var recs []record
	var reports []Report
	wantRejected := map[string]int{}
	for i := range honest {
		rec := randomRecord(rng, bins)
		r := f.encode(t, rec.bin, rec.label)
		recs, reports = append(recs, rec), append(reports, r)
		k := kinds[i%len(kinds)]
		reports = append(reports, k.build(t, f.encode(t, rec.bin, rec.label), r, rec, rng))
		wantRejected[Reason(k.want)]++
	}
	reports = append(reports, reports[0]) // a replay of an accepted report
	wantRejected["replay"]++
	agg, rejected := f.verifyAll(t, reports)
	if !equalMaps(rejected, wantRejected) {
		t.Fatalf("rejected %v, want %v", rejected, wantRejected)
	}
	if got, want := reveal(t, agg), plainPrefixes(recs, bins); !equalPrefixes(got, want) {
		t.Fatalf("prefixes over honest+malicious %v, want honest-only %v", got, want)
	}
}

func equalMaps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestBadArguments(t *testing.T) {
	if _, err := New(0); err == nil {
		t.Error("New(0): no error")
	}
	f := newFixture(t, 4)
	for _, bin := range []int{-1, 4} {
		if _, err := f.s.Encode(bin, false, crand.Reader); err == nil {
			t.Errorf("Encode(bin %d): no error", bin)
		}
	}
	if _, err := f.s.NewServer(2, [KeySize]byte{}); err == nil {
		t.Error("NewServer(2): no error")
	}
	pend, _, err := f.leader.Prepare([NonceSize]byte{}, nil, nil)
	if !errors.Is(err, ErrMalformed) || pend != nil {
		t.Errorf("Prepare(empty): %v, want %v", err, ErrMalformed)
	}
}

// TestForgeriesRejected: every Forgery, the invalid reports simulations
// send, is rejected at both servers for its stated reason.
func TestForgeriesRejected(t *testing.T) {
	const bins = 16
	f := newFixture(t, bins)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range Forgeries() {
		t.Run(k.Name, func(t *testing.T) {
			for range reportCount(50) {
				var nonce [NonceSize]byte
				crand.Read(nonce[:])
				rec := randomRecord(rng, bins)
				r, err := f.s.Forge(k.Kind, nonce, rec.bin, rec.label, crand.Reader, rng)
				if err != nil {
					t.Fatal(err)
				}
				if r.Nonce != nonce {
					t.Fatalf("nonce %x, want %x", r.Nonce, nonce)
				}
				for i, err := range f.serverErrors(r) {
					if !errors.Is(err, k.Want) {
						t.Fatalf("server %d: error %v, want %v", i, err, k.Want)
					}
				}
			}
		})
	}
	if _, err := f.s.Forge(numForgeries, [NonceSize]byte{}, 0, false, crand.Reader, rng); err == nil {
		t.Error("Forge(unknown kind): no error")
	}
}

func TestLiftLower(t *testing.T) {
	for _, x := range []int64{0, 1, -1, 1 << 40, -(1 << 40), math.MaxInt64, math.MinInt64} {
		t.Run(fmt.Sprint(x), func(t *testing.T) {
			if got, err := Lower(Lift(x)); err != nil || int64(got) != x {
				t.Errorf("Lower(Lift(%d)) = %d, %v", x, int64(got), err)
			}
		})
	}
	a, b := Lift(math.MaxInt64), Lift(math.MaxInt64)
	a.AddAssign(&b) // 2^64 − 2: fits, as two's complement −2
	if got, err := Lower(a); err != nil || int64(got) != -2 {
		t.Errorf("Lower(2·MaxInt64) = %d, %v; want two's complement -2", int64(got), err)
	}
	a.AddAssign(&b) // beyond 2^64
	if _, err := Lower(a); err == nil {
		t.Error("Lower(3·MaxInt64): no error")
	}
}

// TestRederive: each server's output share re-derived from its input
// share alone is the one Finish gave, so an aggregate rebuilt from stored
// shares reveals the same histogram; a share that does not match its
// public share is refused.
func TestRederive(t *testing.T) {
	const bins = 8
	f := newFixture(t, bins)
	rng := rand.New(rand.NewPCG(3, 4))
	var finished, rederived [2]*Aggregate
	for i := range finished {
		finished[i], rederived[i] = f.s.NewAggregate(), f.s.NewAggregate()
	}
	srv := [2]*Server{f.leader, f.helper}
	for range 20 {
		rec := randomRecord(rng, bins)
		r := f.encode(t, rec.bin, rec.label)
		outs, err := VerifyPair(f.leader, f.helper, r)
		if err != nil {
			t.Fatal(err)
		}
		for i := range srv {
			again, err := srv[i].Rederive(r.Nonce, r.Public, r.Shares[i])
			if err != nil {
				t.Fatalf("server %d: %v", i, err)
			}
			if err := finished[i].Add(r.Nonce, outs[i]); err != nil {
				t.Fatal(err)
			}
			if err := rederived[i].Add(r.Nonce, again); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range srv {
		a, _ := finished[i].Prefixes()
		b, _ := rederived[i].Prefixes()
		if !slices.Equal(a.Count, b.Count) || !slices.Equal(a.Label, b.Label) {
			t.Fatalf("server %d: re-derived aggregate differs from the verified one", i)
		}
	}
	other := f.encode(t, 0, false)
	r := f.encode(t, 1, true)
	if _, err := f.helper.Rederive(r.Nonce, r.Public, other.Shares[1]); !errors.Is(err, ErrMismatch) {
		t.Errorf("Rederive(another report's share) = %v, want ErrMismatch", err)
	}
}
