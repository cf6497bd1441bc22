package vdcf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
)

var reportsFlag = flag.Int("vdcf.reports", 0,
	"reports per test: honest reports, and invalid reports of each kind (default 2000 and 40; issue 17 asks 10000)")

// reportCount is the -vdcf.reports flag if set, otherwise def.
func reportCount(def int) int {
	if *reportsFlag > 0 {
		return *reportsFlag
	}
	return def
}

// fixture is a scheme with its two servers sharing one key, and a
// deterministic random stream.
type fixture struct {
	s   *Scheme
	srv [2]*Server
	rnd *rand.ChaCha8
	r   *rand.Rand // over rnd
}

func newFixture(t testing.TB, bins int, seed byte) *fixture {
	t.Helper()
	s, err := New(bins)
	return fixtureOf(t, s, err, seed)
}

// newProbFixture is newFixture for a scheme that carries the probability.
func newProbFixture(t testing.TB, bins int, seed byte) *fixture {
	t.Helper()
	s, err := NewWithProbability(bins)
	return fixtureOf(t, s, err, seed+100)
}

func fixtureOf(t testing.TB, s *Scheme, err error, seed byte) *fixture {
	t.Helper()
	bins := s.Bins()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, rnd: rand.NewChaCha8([32]byte{seed, byte(bins)})}
	f.r = rand.New(f.rnd)
	var key [KeySize]byte
	f.rnd.Read(key[:])
	for id := range f.srv {
		if f.srv[id], err = s.NewServer(id, key); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// encode encodes the record, with a random probability if the scheme
// carries it.
func (f *fixture) encode(t testing.TB, bin int, label bool) Report {
	t.Helper()
	if f.s.prob {
		return f.encodeProb(t, bin, label, f.r.Uint64N(MaxProbability+1))
	}
	r, err := f.s.Encode(bin, label, f.rnd)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// encodeRecord encodes the record, with the probability prob if the
// scheme carries it.
func (f *fixture) encodeRecord(t testing.TB, bin int, label bool, prob uint64) Report {
	t.Helper()
	if f.s.prob {
		return f.encodeProb(t, bin, label, prob)
	}
	return f.encode(t, bin, label)
}

func (f *fixture) encodeProb(t testing.TB, bin int, label bool, prob uint64) Report {
	t.Helper()
	r, err := f.s.EncodeProbability(bin, label, prob, f.rnd)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// nonce draws a nonce from the fixture's stream.
func (f *fixture) nonce() (n [NonceSize]byte) {
	f.rnd.Read(n[:])
	return n
}

// evaluate decodes server id's share and returns it with its prefix
// vector.
func (f *fixture) evaluate(t testing.TB, id int, share []byte) (*Share, []fss.Fp) {
	t.Helper()
	sh, err := f.srv[id].DecodeShare(share)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.srv[id].Evaluate([]*Share{sh})
	if err != nil {
		t.Fatal(err)
	}
	return sh, out[0]
}

// attack lets a test alter what a server holds or sends: its prefix vector
// and correlated randomness before Prepare, its first message.
type attack struct {
	vector  func(id int, v []fss.Fp)
	share   func(id int, sh *Share)
	opening func(id int, msg []byte) []byte
}

// decide runs both servers on the report's shares, with the attack, and
// returns each server's decision (nil: accepted). A server that cannot
// decode its share sends nothing, and the other rejects too.
func (f *fixture) decide(t testing.TB, nonce [NonceSize]byte, shares [2][]byte, a attack) [2]error {
	t.Helper()
	var pend [2]*Pending
	var msg [2][]byte
	for id, v := range f.srv {
		sh, err := v.DecodeShare(shares[id])
		if err != nil {
			return [2]error{err, err}
		}
		out, err := v.Evaluate([]*Share{sh})
		if err != nil {
			t.Fatal(err)
		}
		if a.vector != nil {
			a.vector(id, out[0])
		}
		if a.share != nil {
			a.share(id, sh)
		}
		if pend[id], msg[id], err = v.Prepare(nonce, sh, out[0]); err != nil {
			t.Fatal(err)
		}
		if a.opening != nil {
			msg[id] = a.opening(id, msg[id])
		}
	}
	return exchange(pend, msg)
}

// TestHonestReportsAccepted checks that honest reports are accepted,
// with the probability at the edges of its range too, and that the prefix
// vectors add up to the record's count, label (and probability).
func TestHonestReportsAccepted(t *testing.T) {
	for _, prob := range []bool{false, true} {
		for _, bins := range []int{1, 16, 1024} {
			t.Run(fmt.Sprintf("probability=%v/bins=%d", prob, bins), func(t *testing.T) {
				f := newFixture(t, bins, 1)
				if prob {
					f = newProbFixture(t, bins, 1)
				}
				honestAccepted(t, f)
			})
		}
	}
}

func honestAccepted(t *testing.T, f *fixture) {
	n := reportCount(2000)
	if f.s.bins == 1024 {
		n = max(n/20, 20)
	}
	for i := range n {
		bin, label := f.r.IntN(f.s.bins), f.r.IntN(2) == 1
		want := map[int]fss.Fp{int(payload.Count): 1, int(payload.Label): labelValue(label)}
		prob := []uint64{0, 1, MaxProbability - 1, MaxProbability}[i%4]
		if i >= 4 {
			prob = f.r.Uint64N(MaxProbability + 1)
		}
		if f.s.prob {
			want[Probability] = fss.Fp(prob)
		}
		vecs, err := VerifyPair(f.srv[0], f.srv[1], f.encodeRecord(t, bin, label, prob))
		if err != nil {
			t.Fatalf("report %d (bin %d, label %v, probability %d) rejected: %v", i, bin, label, prob, err)
		}
		checkPayload(t, vecs, f.s, bin, want)
	}
}

// checkPayload checks that the two servers' summed components
// (Prepared.Summed) add up to want[c] at component c from bin on, 0
// before, and that want names every component summed.
func checkPayload(t testing.TB, vecs [2][]fss.Fp, s *Scheme, bin int, want map[int]fss.Fp) {
	t.Helper()
	if len(want) != len(s.Summed()) {
		t.Fatalf("components %v summed, want %v", s.Summed(), want)
	}
	for k, c := range s.Summed() {
		for j := range s.bins {
			w, at := want[int(c)], k*s.bins+j
			if j < bin {
				w = 0
			}
			if got := vecs[0][at].Add(vecs[1][at]); got != w {
				t.Fatalf("bin %d %v: prefix %d component %d = %d, want %d", bin, want, j, c, got, w)
			}
		}
	}
}

// invalid is one kind of invalid report: how to make it, and the reason
// both servers must give.
type invalid struct {
	name   string
	reason string
	make   func(t testing.TB, f *fixture) (Report, attack)
}

// payloadReport is a report with the payload (count, label) at a random
// bin and a MAC consistent with it; the not-label is count − label.
func payloadReport(beta ...fss.Fp) func(testing.TB, *fixture) (Report, attack) {
	return func(t testing.TB, f *fixture) (Report, attack) {
		r, err := f.s.encode(f.nonce(), plain{bin: f.r.IntN(f.s.bins), beta: beta}, f.rnd)
		if err != nil {
			t.Fatal(err)
		}
		return r, attack{}
	}
}

// tamperedCorr is an honest report whose correlated values the party
// altered: edit changes them after the determined ones are set. The keys'
// MAC is made with the altered κ₁, κ₂ and the explicit shares carry the
// altered determined values; the free values stay their seeds'.
func tamperedCorr(edit func(c []fss.Fp)) func(testing.TB, *fixture) (Report, attack) {
	return func(t testing.TB, f *fixture) (Report, attack) {
		d, err := f.s.newDraft(f.nonce(), f.rnd)
		if err != nil {
			t.Fatal(err)
		}
		pl := f.s.honest(f.r.IntN(f.s.bins), true, f.r)
		f.s.correlated(d, pl)
		edit(d.corr)
		r, err := f.s.assemble(d, pl, f.rnd)
		if err != nil {
			t.Fatal(err)
		}
		return r, attack{}
	}
}

// mixedVectors is two honest reports A and B with label 1 at different
// bins, A sent, with each server's prefix vector of the components in
// comps taken from B instead: a party whose keys put those components at
// another bin.
func mixedVectors(comps ...payload.Component) func(testing.TB, *fixture) (Report, attack) {
	return func(t testing.TB, f *fixture) (Report, attack) {
		binA := f.r.IntN(f.s.bins - 1)
		a := f.encode(t, binA, true)
		b := f.encode(t, binA+1+f.r.IntN(f.s.bins-1-binA), true)
		return a, attack{vector: func(id int, v []fss.Fp) {
			_, other := f.evaluate(t, id, b.Shares[id])
			for j := range f.s.bins {
				for _, c := range comps {
					v[j*f.s.Components()+int(c)] = other[j*f.s.Components()+int(c)]
				}
			}
		}}
	}
}

// invalidKinds lists the invalid reports of issue 17 and a few more.
func invalidKinds() []invalid {
	p := fss.Fp(fss.Modulus)
	return []invalid{
		{"payload 2", "proof", payloadReport(2, 0)},
		{"payload 2 with label 2", "proof", payloadReport(2, 2)},
		{"payload p-1", "proof", payloadReport(p-1, 0)},
		{"payload 0", "proof", payloadReport(0, 0)},
		{"label 2", "proof", payloadReport(1, 2)},
		{"label p-1", "proof", payloadReport(1, p-1)},
		{"label and 1-label both set (count 2)", "proof", payloadReport(2, 1)},
		{"two bins: two reports' keys summed", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			a, b := f.encode(t, f.r.IntN(f.s.bins), false), f.encode(t, f.r.IntN(f.s.bins), false)
			return a, attack{vector: func(id int, v []fss.Fp) {
				_, other := f.evaluate(t, id, b.Shares[id])
				for i := range v {
					v[i] = v[i].Add(other[i])
				}
			}}
		}},
		{"two bins: key pair for a non-one-hot function", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			// Add δ to the same value correction word of both keys: the
			// sum changes by ±δ over a subtree on the path of α, which
			// for bin ≥ 1 (α ≤ N − 1 < 2^(n−1)) lies among the evaluated
			// points x < N.
			r := f.encode(t, 1+f.r.IntN(f.s.bins-1), false)
			level, comp := f.r.IntN(f.s.dom.Bits()), f.r.IntN(f.s.Components())
			off := 4 + 16 + level*(16+8*f.s.Components()) + 16 + 8*comp
			delta := fss.Fp(1 + f.r.Uint64N(1000))
			for b := range r.Shares {
				w := fss.Fp(binary.LittleEndian.Uint64(r.Shares[b][off:]))
				binary.LittleEndian.PutUint64(r.Shares[b][off:], uint64(w.Add(delta)))
			}
			return r, attack{}
		}},
		{"label at another bin than count", "proof", mixedVectors(payload.Label)},
		{"count at another bin than label", "proof", mixedVectors(payload.Count)},
		{"MAC at another bin", "proof", mixedVectors(MAC)},
		{"keys of two different reports", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			a, b := f.encode(t, f.r.IntN(f.s.bins), true), f.encode(t, f.r.IntN(f.s.bins), false)
			a.Shares[1] = b.Shares[1]
			return a, attack{}
		}},
		{"correlated randomness copied from another report", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			a, b := f.encode(t, f.r.IntN(f.s.bins), true), f.encode(t, f.r.IntN(f.s.bins), true)
			for i := range a.Shares {
				copy(a.Shares[i][f.s.keySize():], b.Shares[i][f.s.keySize():])
			}
			return a, attack{}
		}},
		{"keys of another report with the seeds and nonce of this one", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			a, b := f.encode(t, f.r.IntN(f.s.bins), true), f.encode(t, f.r.IntN(f.s.bins), true)
			for i := range b.Shares {
				copy(b.Shares[i][:f.s.keySize()], a.Shares[i])
			}
			return b, attack{}
		}},
		{"seed of another report", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			a, b := f.encode(t, f.r.IntN(f.s.bins), true), f.encode(t, f.r.IntN(f.s.bins), true)
			id, at := f.r.IntN(2), f.s.keySize()
			copy(a.Shares[id][at:at+SeedSize], b.Shares[id][at:])
			return a, attack{}
		}},
		{"report copied under another nonce", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), true)
			r.Nonce = f.nonce()
			return r, attack{}
		}},
		{"random seeds and explicit shares", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			for id := range r.Shares {
				f.rnd.Read(r.Shares[id][f.s.keySize() : f.s.keySize()+SeedSize])
				for k := range f.s.explicit[id] {
					addElement(r.Shares[id], f.s.keySize()+SeedSize+8*k, fss.Fp(f.r.Uint64N(fss.Modulus)))
				}
			}
			return r, attack{}
		}},
		{"square of the triple wrong", "proof", tamperedCorr(func(c []fss.Fp) { c[corrC1] = c[corrC1].Add(1) })},
		{"product of the triple wrong", "proof", tamperedCorr(func(c []fss.Fp) { c[corrC2] = c[corrC2].Add(1) })},
		{"μ wrong", "proof", tamperedCorr(func(c []fss.Fp) { c[corrMu] = c[corrMu].Add(1) })},
		{"MAC key in the keys not the seeds'", "proof", tamperedCorr(func(c []fss.Fp) {
			c[corrK1], c[corrMu] = c[corrK1].Add(1), c[corrMu].Add(c[corrA1]) // κ₁ + 1, with μ consistent with it
		})},
		{"explicit share of the helper off by one", "proof", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			addElement(r.Shares[1], f.s.keySize()+SeedSize+8*f.r.IntN(len(f.s.explicit[1])), 1)
			return r, attack{}
		}},
		{"truncated share", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			id := f.r.IntN(2)
			r.Shares[id] = r.Shares[id][:f.s.keySize()+f.r.IntN(f.s.ShareSize(id)-f.s.keySize())]
			return r, attack{}
		}},
		{"seed one byte short", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			id, at := f.r.IntN(2), f.s.keySize()+f.r.IntN(SeedSize)
			r.Shares[id] = append(r.Shares[id][:at:at], r.Shares[id][at+1:]...)
			return r, attack{}
		}},
		{"seed one byte long", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			id, at := f.r.IntN(2), f.s.keySize()+f.r.IntN(SeedSize)
			r.Shares[id] = append(r.Shares[id][:at:at], append([]byte{byte(f.r.IntN(256))}, r.Shares[id][at:]...)...)
			return r, attack{}
		}},
		{"random share", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			f.rnd.Read(r.Shares[1])
			return r, attack{}
		}},
		{"correlated randomness not canonical", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			binary.LittleEndian.PutUint64(r.Shares[0][len(r.Shares[0])-8:], fss.Modulus)
			return r, attack{}
		}},
		{"shares swapped between the servers", "mismatch", func(t testing.TB, f *fixture) (Report, attack) {
			r := f.encode(t, f.r.IntN(f.s.bins), false)
			r.Shares[0], r.Shares[1] = r.Shares[1], r.Shares[0]
			return r, attack{}
		}},
		{"share for another grid", "malformed", func(t testing.TB, f *fixture) (Report, attack) {
			other := newFixture(t, 2*f.s.bins, 9)
			return other.encode(t, 0, true), attack{}
		}},
	}
}

// TestInvalidReportsRejected checks that both servers reject every kind of
// invalid report, many random instances of each, for the right reason.
func TestInvalidReportsRejected(t *testing.T) {
	f := newFixture(t, 16, 2)
	for _, kind := range invalidKinds() {
		t.Run(kind.name, func(t *testing.T) {
			for range reportCount(40) {
				r, a := kind.make(t, f)
				for id, err := range f.decide(t, r.Nonce, r.Shares, a) {
					if err == nil {
						t.Fatalf("server %d accepted it", id)
					}
					if got := verify.Reason(err); got != kind.reason {
						t.Fatalf("server %d: reason %q (%v), want %q", id, got, err, kind.reason)
					}
				}
			}
		})
	}
}

// TestTamperedPrefixRejectedWhateverTheRecord is the selective-failure
// attack of a corrupt leader: it adds δ to its share of the count prefix
// at one bin j, or to its first message, hoping that the decision depends
// on whether the record lies at j. The MAC makes every tampered report
// fail, at j or not, so the decision tells nothing about the record.
func TestTamperedPrefixRejectedWhateverTheRecord(t *testing.T) {
	f := newFixture(t, 8, 3)
	const j = 5
	for _, tc := range []struct {
		name string
		a    attack
	}{
		{"count share at bin j", attack{vector: func(id int, v []fss.Fp) {
			if id == 0 {
				v[j*f.s.Components()+int(payload.Count)] = v[j*f.s.Components()+int(payload.Count)].Add(1)
				if j > 0 { // keep the total: a shift of the count's difference at j only
					v[(j-1)*f.s.Components()+int(payload.Count)] = v[(j-1)*f.s.Components()+int(payload.Count)].Add(1)
				}
			}
		}}},
		{"label share at bin j", attack{vector: func(id int, v []fss.Fp) {
			if id == 0 {
				for k := j; k < 8; k++ {
					v[k*f.s.Components()+int(payload.Label)] = v[k*f.s.Components()+int(payload.Label)].Sub(1)
				}
			}
		}}},
		{"first opening", attack{opening: func(id int, msg []byte) []byte {
			if id == 0 {
				d := fss.Fp(binary.LittleEndian.Uint64(msg))
				binary.LittleEndian.PutUint64(msg, uint64(d.Add(7)))
			}
			return msg
		}}},
	} {
		for _, bin := range []int{j, j - 1, 0} {
			for _, label := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/bin=%d/label=%v", tc.name, bin, label), func(t *testing.T) {
					for range 20 {
						r := f.encode(t, bin, label)
						for id, err := range f.decide(t, r.Nonce, r.Shares, tc.a) {
							if !errors.Is(err, verify.ErrProof) {
								t.Fatalf("server %d: %v, want a rejection (ErrProof)", id, err)
							}
						}
					}
				})
			}
		}
	}
}

func TestServerRejectsMisuse(t *testing.T) {
	f := newFixture(t, 4, 4)
	r := f.encode(t, 1, true)
	sh, vec := f.evaluate(t, 0, r.Shares[0])
	if _, err := f.s.NewServer(2, [KeySize]byte{}); err == nil {
		t.Error("server id 2 accepted")
	}
	if _, _, err := f.srv[0].Prepare(r.Nonce, sh, vec[:len(vec)-1]); err == nil {
		t.Error("short prefix vector accepted")
	}
	p, _, err := f.srv[0].Prepare(r.Nonce, sh, vec)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(make([]byte, Message2Size)); err == nil {
		t.Error("Finish before Exchange accepted")
	}
	for name, msg := range map[string][]byte{"short": make([]byte, f.s.Message1Size()-1), "not canonical": bytes.Repeat([]byte{0xff}, f.s.Message1Size())} {
		if _, err := p.Exchange(msg); !errors.Is(err, verify.ErrMalformed) {
			t.Errorf("%s first message: %v, want ErrMalformed", name, err)
		}
	}
	if _, err := f.s.Encode(4, false, f.rnd); err == nil {
		t.Error("bin outside the grid accepted")
	}
}

func FuzzDecodeShare(f *testing.F) {
	fx := newFixture(f, 16, 5)
	r := fx.encode(f, 3, true)
	f.Add(r.Shares[0])
	f.Add(r.Shares[1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for id, v := range fx.srv {
			sh, err := v.DecodeShare(data)
			if err != nil {
				if r := verify.Reason(err); r != "malformed" && r != "mismatch" {
					t.Fatalf("server %d: reason %q for %v", id, r, err)
				}
				continue
			}
			enc, _ := sh.key.MarshalBinary()
			if !bytes.Equal(appendElements(append(enc, sh.seed[:]...), sh.explicit), data) {
				t.Fatal("accepted a non-canonical share")
			}
		}
	})
}

// TestLiftLower checks that Lower inverts sums of Lifts in range, at the
// edges too.
func TestLiftLower(t *testing.T) {
	for _, tt := range []struct{ a, b int64 }{
		{0, 0}, {1, -1}, {-5, 3}, {1 << 61, 1 << 61}, {-(1 << 61), -(1 << 61) + 1}, {1<<62 - 1, 0}, {-(1 << 62), 7},
	} {
		t.Run(fmt.Sprintf("%d+%d", tt.a, tt.b), func(t *testing.T) {
			if got := int64(Lower(Lift(tt.a).Add(Lift(tt.b)))); got != tt.a+tt.b {
				t.Errorf("Lower(Lift(%d) + Lift(%d)) = %d", tt.a, tt.b, got)
			}
		})
	}
}

// exchange completes the verifications pend, whose first messages are
// msg: each server's second message, then both decisions.
func exchange(pend [2]*Pending, msg [2][]byte) [2]error {
	var second [2][]byte
	for id := range pend {
		var err error
		if second[id], err = pend[id].Exchange(msg[1-id]); err != nil {
			return [2]error{err, err}
		}
	}
	return [2]error{pend[0].Finish(second[1]), pend[1].Finish(second[0])}
}
