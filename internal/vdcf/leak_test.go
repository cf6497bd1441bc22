package vdcf

import (
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

// TestLeakedMessagesDoNotForge is the audit's attack on a challenge that
// outlives the reports it checks: a party obtains the leader's first
// message for bins of its own honest reports (a stolen store, a log) and
// solves, from d₁ = Σ_j u_j·P_L(j) − a₁ with P_L the leader's prefix
// shares (the party made both keys) and a₁'s leader share (its own
// seed's expansion), for the weights u and so the challenge vector r;
// then it forges label 2 at a bin, offsetting its Beaver product
// c₂ by 2r_b² so that x₂(x₁ − x₂) + δ₂ = 0. With the challenge derived
// per report from the key and the report's nonce, the solved r is not
// the next report's, and every forgery is rejected. The control shows
// the forgery is exact: with the target report's true challenge (which
// only the key gives) the same construction is accepted.
func TestLeakedMessagesDoNotForge(t *testing.T) {
	const bins, tries = 16, 20
	f := newFixture(t, bins, 31)
	// The leaks: bins honest reports, the leader's first message of each;
	// per check, the leader's count prefixes and the right-hand side.
	var rows [checks][][]fss.Fp
	n, m := f.s.openings(), f.s.Components()
	for i := range bins {
		d, err := f.s.newDraft(f.nonce(), f.rnd)
		if err != nil {
			t.Fatal(err)
		}
		pl := f.s.honest(i, i%2 == 1, f.r)
		f.s.correlated(d, pl)
		r, err := f.s.assemble(d, pl, f.rnd)
		if err != nil {
			t.Fatal(err)
		}
		first, _ := f.exchange(t, r, nil)
		_, vec := f.evaluate(t, 0, r.Shares[0])
		for k := range checks {
			row := make([]fss.Fp, bins+1)
			for j := range bins {
				row[j] = vec[j*m+0]
			}
			row[bins] = element(first[0][8*k*n:]).Add(d.exp[0][k*f.s.blockLen()+corrA1])
			rows[k] = append(rows[k], row)
		}
	}
	var solved [checks][]fss.Fp
	for k := range checks {
		u, ok := solve(rows[k])
		if !ok {
			t.Fatal("the leaked equations are singular")
		}
		solved[k] = make([]fss.Fp, bins) // r_j = Σ_{i ≥ j} u_i
		var acc fss.Fp
		for j := bins - 1; j >= 0; j-- {
			acc = acc.Add(u[j])
			solved[k][j] = acc
		}
	}
	forged := 0
	for i := range tries {
		bin := i % bins
		nonce := f.nonce()
		var truth [checks][]fss.Fp
		for k := range checks {
			_, truth[k] = challengeOf(f.srv[0], k, nonce)
		}
		if err := f.forgeLabelTwo(t, nonce, bin, truth); err != nil {
			t.Fatalf("forgery with the report's true challenges rejected (the attack is wrong): %v", err)
		}
		if err := f.forgeLabelTwo(t, nonce, bin, solved); err == nil {
			forged++
		}
	}
	if forged > 0 {
		t.Errorf("%d of %d label-2 forgeries from %d leaked first messages accepted", forged, tries, bins)
	}
}

// forgeLabelTwo makes a report of label 2 at bin under nonce whose Beaver
// products are offset by 2r_b² for the challenge vectors r the party
// believes in (one per check), and returns the servers' decision.
func (f *fixture) forgeLabelTwo(t *testing.T, nonce [NonceSize]byte, bin int, r [checks][]fss.Fp) error {
	t.Helper()
	d, err := f.s.newDraft(nonce, f.rnd)
	if err != nil {
		t.Fatal(err)
	}
	pl := f.s.honest(bin, false, f.r)
	pl.beta[1] = 2
	f.s.correlated(d, pl)
	for k := range checks {
		c2 := &d.corr[k*f.s.blockLen()+corrC2]
		*c2 = c2.Add(fss.Fp(2).Mul(r[k][bin]).Mul(r[k][bin]))
	}
	rep, err := f.s.assemble(d, pl, f.rnd)
	if err != nil {
		t.Fatal(err)
	}
	_, err = VerifyPair(f.srv[0], f.srv[1], rep)
	return err
}

// solve solves the square system of rows (coefficients, then the
// right-hand side) over F_p by Gaussian elimination; ok is false if it is
// singular.
func solve(rows [][]fss.Fp) (x []fss.Fp, ok bool) {
	n := len(rows)
	for c := range n {
		p := c
		for p < n && rows[p][c] == 0 {
			p++
		}
		if p == n {
			return nil, false
		}
		rows[c], rows[p] = rows[p], rows[c]
		inv := inverse(rows[c][c])
		for j := c; j <= n; j++ {
			rows[c][j] = rows[c][j].Mul(inv)
		}
		for i := range n {
			if i != c && rows[i][c] != 0 {
				k := rows[i][c]
				for j := c; j <= n; j++ {
					rows[i][j] = rows[i][j].Sub(k.Mul(rows[c][j]))
				}
			}
		}
	}
	x = make([]fss.Fp, n)
	for i := range x {
		x[i] = rows[i][n]
	}
	return x, true
}

// inverse is a^(p−2), the inverse of a ≠ 0 in F_p.
func inverse(a fss.Fp) fss.Fp {
	r, e := fss.Fp(1), uint64(fss.Modulus-2)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = r.Mul(a)
		}
		a = a.Mul(a)
	}
	return r
}

// challengeOf is check k's challenge of the report with the nonce at
// server v (its row factors in a buffer of their own) and its challenge
// vector r, r_j = α_h·β_l.
func challengeOf(v *Server, k int, nonce [NonceSize]byte) (coefficients, []fss.Fp) {
	c := v.challenges(nonce, v.newScratch())[k]
	r := make([]fss.Fp, v.s.bins)
	for j := range r {
		r[j] = c.r(j)
	}
	return c, r
}
