package vdcf

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/stattest"
)

// nibbleCounts counts the low 4 bits of each field element of msg.
func nibbleCounts(h *[16]int, msg []byte) {
	for i := 0; i+8 <= len(msg); i += 8 {
		h[msg[i]&0xf]++
	}
}

// TestMessagesLookUniform is the zero-knowledge smoke test: for two
// different records, every message a server receives (the other's masked
// openings and its share of z) is uniform, so are the explicit shares of
// the determined values (the bits among them) the party sends each
// server, and so is the check value a corrupt leader learns when it
// shifts its opening (χ² on the low 4 bits of each field element). The χ²
// of the record's own prefix shares reconstructed (a one-hot vector) shows
// the test has power. Thirty statistics are compared with
// stattest.NibbleLimit: a correct implementation fails with probability
// < 7.5·10⁻⁶, and the seeds are fixed, so the test is deterministic.
func TestMessagesLookUniform(t *testing.T) {
	const bins, n = 16, 600
	for _, tc := range []struct {
		name  string
		f     *fixture
		shift int // the shifted opening
	}{
		{"count and label", newFixture(t, bins, 6), 1},
		{"probability, opening of b_32 shifted", newProbFixture(t, bins, 6), 3 + probBits - 1},
		{"probability, opening of p̂ shifted", newProbFixture(t, bins, 7), 2},
	} {
		t.Run(tc.name, func(t *testing.T) { messagesLookUniform(t, tc.f, tc.shift, n) })
	}
}

func messagesLookUniform(t *testing.T, f *fixture, opening, n int) {
	bins := f.s.bins
	shift := func(id int, msg []byte) []byte {
		if id == 0 {
			d := fss.Fp(binary.LittleEndian.Uint64(msg[8*opening:]))
			binary.LittleEndian.PutUint64(msg[8*opening:], uint64(d.Add(1)))
		}
		return msg
	}
	for _, rec := range []struct {
		bin   int
		label bool
		prob  uint64
	}{{0, false, 0}, {bins - 1, true, MaxProbability}} {
		var seen [6][16]int // received by the leader, by the helper, z under attack, plaintext, explicit shares of the leader, of the helper
		for range n {
			r := f.encodeRecord(t, rec.bin, rec.label, rec.prob)
			first, second := f.exchange(t, r, nil)
			nibbleCounts(&seen[0], append(first[1], second[1]...))
			nibbleCounts(&seen[1], append(first[0], second[0]...))
			nibbleCounts(&seen[4], r.Shares[0][f.s.keySize()+SeedSize:])
			nibbleCounts(&seen[5], r.Shares[1][f.s.keySize()+SeedSize:])
			z, _ := leaderView(f.exchangePending(t, r, shift))
			nibbleCounts(&seen[2], binary.LittleEndian.AppendUint64(nil, uint64(z)))
			vecs, err := VerifyPair(f.srv[0], f.srv[1], r)
			if err != nil {
				t.Fatal(err)
			}
			nibbleCounts(&seen[3], binary.LittleEndian.AppendUint64(nil, uint64(vecs[0][0].Add(vecs[1][0]))))
		}
		for _, st := range []struct {
			k    int
			name string
		}{{0, "received by leader"}, {1, "received by helper"}, {2, "check value under a shifted opening"}, {4, "explicit shares of the leader"}, {5, "explicit shares of the helper"}} {
			k := st.k
			t.Run(fmt.Sprintf("bin=%d label=%v/%s", rec.bin, rec.label, st.name), func(t *testing.T) {
				if x := stattest.NibbleChiSquare(seen[k]); x > stattest.NibbleLimit {
					t.Errorf("χ² = %.1f > %d: %v", x, stattest.NibbleLimit, seen[k])
				}
			})
		}
		if x := stattest.NibbleChiSquare(seen[3]); x <= stattest.NibbleLimit {
			t.Errorf("χ² of the plaintext count prefix = %.1f, not above %d: the test has no power", x, stattest.NibbleLimit)
		}
	}
}

// exchange runs both servers on r, with opening altering the first
// messages, and returns the first and second messages each server sent.
func (f *fixture) exchange(t *testing.T, r Report, opening func(int, []byte) []byte) (first, second [2][]byte) {
	t.Helper()
	first, second, _ = f.exchangePending(t, r, opening)
	return first, second
}

// exchangePending is exchange, also returning both servers' states.
func (f *fixture) exchangePending(t *testing.T, r Report, opening func(int, []byte) []byte) (first, second [2][]byte, pend [2]*Pending) {
	t.Helper()
	for id, v := range f.srv {
		sh, vec := f.evaluate(t, id, r.Shares[id])
		var err error
		if pend[id], first[id], err = v.Prepare(r.Nonce, sh, vec); err != nil {
			t.Fatal(err)
		}
		if opening != nil {
			first[id] = opening(id, first[id])
		}
	}
	for id := range pend {
		var err error
		if second[id], err = pend[id].Exchange(first[1-id]); err != nil {
			t.Fatal(err)
		}
	}
	return first, second, pend
}

// TestCorruptLeaderCannotReadTheBin is the attack the MAC stops: a leader
// shifts its opening of x₂ = ⟨r, ΔLabel⟩ by 1, so that z = ρ₁(x₁ − 2x₂ − 1)
// + ρ₄κ₂ with x₁ = r_b, x₂ = y·r_b, and matches the z it learns against
// every (bin, label). With the MAC term no guess matches; with the MAC
// term taken out (a scheme without it), the true record always does, so
// the test has power.
func TestCorruptLeaderCannotReadTheBin(t *testing.T) {
	const bins = 16
	f := newFixture(t, bins, 7)
	shift := func(id int, msg []byte) []byte {
		if id == 0 {
			d := fss.Fp(binary.LittleEndian.Uint64(msg[8:]))
			binary.LittleEndian.PutUint64(msg[8:], uint64(d.Add(1)))
		}
		return msg
	}
	for i := range 50 {
		bin, label := f.r.IntN(bins), f.r.IntN(2) == 1
		r := f.encode(t, bin, label)
		first, second, pend := f.exchangePending(t, r, shift)
		z, d := leaderView(first, second, pend)
		mac := pend[0].macShare(&pend[0].chk[0], d).Add(pend[1].macShare(&pend[1].chk[0], d)) // κ₁D₁ + κ₂D₂ + μ − ⟨r, ΔM⟩
		noMAC := z.Sub(pend[0].chk[0].coef.rho[rhoMAC].Mul(mac))
		_, rv := challengeOf(f.srv[0], 0, r.Nonce)
		guesses := func(v fss.Fp) (hits []string) {
			rho1 := pend[0].chk[0].coef.rho[rhoLabel]
			for b, rb := range rv {
				for _, y := range []fss.Fp{0, 1} {
					if rho1.Mul(rb.Sub(y.Mul(rb)).Sub(y.Mul(rb)).Sub(1)) == v {
						hits = append(hits, fmt.Sprint(b, y))
					}
				}
			}
			return hits
		}
		if hits := guesses(z); len(hits) > 0 {
			t.Fatalf("report %d: the leader's guesses %v match the check value", i, hits)
		}
		y := 0
		if label {
			y = 1
		}
		if hits, want := guesses(noMAC), fmt.Sprint(bin, y); len(hits) != 1 || hits[0] != want {
			t.Fatalf("report %d: without the MAC the guesses %v, want exactly the record %s: the test has no power", i, hits, want)
		}
	}
}

// leaderView returns what a leader that shifted its first message learns:
// the check value z as the helper's share of it completes the leader's own
// share computed with the openings the helper used, and those openings.
func leaderView(first, second [2][]byte, pend [2]*Pending) (z fss.Fp, d []fss.Fp) {
	d = make([]fss.Fp, len(pend[0].chk[0].open))
	for j := range d {
		d[j] = element(first[0][8*j:]).Add(element(first[1][8*j:]))
	}
	return pend[0].checkShare(&pend[0].chk[0], d).Add(element(second[1])), d
}

// element decodes the first field element of msg.
func element(msg []byte) fss.Fp { return fss.Fp(binary.LittleEndian.Uint64(msg)) }

// TestCorruptLeaderCannotCancelTheMACsOfTwoChecks is the attack the
// second check's own MAC stops: a leader shifts its opening of x₂ by 1 in
// both checks, so that z_k = ρ₁ᵏ(x₁ᵏ − 2x₂ᵏ − 1) + ρ₃ᵏ·κ₂ᵏ, and forms
// ρ₃¹z₀ − ρ₃⁰z₁, free of the MAC keys if the checks shared them, to match
// against every (bin, label). With a key pair per check no guess matches;
// with check 1's MAC term replaced by what a shared key pair gives (check
// 0's, scaled by ρ₃¹/ρ₃⁰), the true record always does, so the test has
// power.
func TestCorruptLeaderCannotCancelTheMACsOfTwoChecks(t *testing.T) {
	const bins = 16
	f := newFixture(t, bins, 9)
	n := f.s.openings()
	shift := func(id int, msg []byte) []byte {
		if id == 0 {
			for k := range checks {
				off := 8 * (k*n + 1)
				d := fss.Fp(binary.LittleEndian.Uint64(msg[off:]))
				binary.LittleEndian.PutUint64(msg[off:], uint64(d.Add(1)))
			}
		}
		return msg
	}
	for i := range 50 {
		bin, label := f.r.IntN(bins), f.r.IntN(2) == 1
		r := f.encode(t, bin, label)
		first, second, pend := f.exchangePending(t, r, shift)
		var z, mac, rho1, rho3 [checks]fss.Fp
		var rv [checks][]fss.Fp
		for k := range checks {
			d := make([]fss.Fp, n)
			for j := range d {
				d[j] = element(first[0][8*(k*n+j):]).Add(element(first[1][8*(k*n+j):]))
			}
			z[k] = pend[0].checkShare(&pend[0].chk[k], d).Add(element(second[1][8*k:]))
			mac[k] = pend[0].macShare(&pend[0].chk[k], d).Add(pend[1].macShare(&pend[1].chk[k], d))
			rho1[k], rho3[k] = pend[0].chk[k].coef.rho[rhoLabel], pend[0].chk[k].coef.rho[rhoMAC]
			_, rv[k] = challengeOf(f.srv[0], k, r.Nonce)
		}
		guesses := func(z0, z1 fss.Fp) (hits []string) {
			v := rho3[1].Mul(z0).Sub(rho3[0].Mul(z1))
			for b := range bins {
				for _, y := range []fss.Fp{0, 1} {
					g := [checks]fss.Fp{}
					for k := range checks {
						g[k] = rho1[k].Mul(rv[k][b].Sub(fss.Fp(2).Mul(y).Mul(rv[k][b])).Sub(1))
					}
					if rho3[1].Mul(g[0]).Sub(rho3[0].Mul(g[1])) == v {
						hits = append(hits, fmt.Sprint(b, y))
					}
				}
			}
			return hits
		}
		if hits := guesses(z[0], z[1]); len(hits) > 0 {
			t.Fatalf("report %d: the leader's guesses %v match its combination of the two check values", i, hits)
		}
		shared := z[1].Sub(rho3[1].Mul(mac[1])).Add(rho3[1].Mul(mac[0]))
		y := 0
		if label {
			y = 1
		}
		if hits, want := guesses(z[0], shared), fmt.Sprint(bin, y); len(hits) != 1 || hits[0] != want {
			t.Fatalf("report %d: with one MAC key pair for both checks the guesses %v, want exactly the record %s: the test has no power", i, hits, want)
		}
	}
}
