package vdcf

import (
	"slices"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
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

// TestTensorFactorsUnpredictable is the forgery that a tensor challenge
// r_(h,l) = α_h·β_l invites if one of its factors can be known: a report
// whose count differences are e_b + v, with v on one line of the tensor
// (row h: v_(h,l) with Σ_l v_l = Σ_l v_l·β_l = Σ_l v_l·β_l² = 0 for both
// checks' β; or a column likewise with α), moves count between bins of
// that line and passes every check whatever the other factor, since
// ⟨r, v⟩ = α_h·Σ_l v_l·β_l and ⟨r∘r, v⟩ = α_h²·Σ_l v_l·β_l² vanish. The
// control builds v from the report's own factors (which only the key
// gives) and is accepted every time: the construction is exact. The
// attack builds it from the factors of the party's previous report, as
// if every challenge before were leaked: with both factors drawn per
// report, after it is fixed, every such forgery is rejected (a factor
// fixed per key, or public, lets all of them through).
func TestTensorFactorsUnpredictable(t *testing.T) {
	const bins, tries = 64, 20 // 8 rows of 8 columns
	for _, tc := range []struct {
		name string
		line func(i int) (js []int, factors func(c *coefficients) (f, f2 []fss.Fp))
	}{
		{"row: column factors β", func(i int) ([]int, func(*coefficients) ([]fss.Fp, []fss.Fp)) {
			h := 1 + i%(bins/tensorCols-1) // the record in row 0
			js := make([]int, tensorCols)
			for l := range js {
				js[l] = h*tensorCols + l
			}
			return js, func(c *coefficients) ([]fss.Fp, []fss.Fp) { return c.beta[:], c.beta2[:] }
		}},
		{"column: row factors α", func(i int) ([]int, func(*coefficients) ([]fss.Fp, []fss.Fp)) {
			l := 1 + i%(tensorCols-1) // the record in column 0
			js := make([]int, bins/tensorCols)
			for h := range js {
				js[h] = h*tensorCols + l
			}
			return js, func(c *coefficients) ([]fss.Fp, []fss.Fp) { return c.alpha, c.alpha2 }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, bins, 32)
			prev := f.nonce()
			forged := 0
			for i := range tries {
				r := f.encode(t, 0, i%2 == 0)
				js, factors := tc.line(i)
				own, leaked := lineEquations(f, r.Nonce, factors), lineEquations(f, prev, factors)
				prev = r.Nonce
				if errs := f.decide(t, r.Nonce, r.Shares, lineForgery(t, f, js, own)); errs[0] != nil || errs[1] != nil {
					t.Fatalf("forgery from the report's own factors rejected (the attack is wrong): %v", errs)
				}
				errs := f.decide(t, r.Nonce, r.Shares, lineForgery(t, f, js, leaked))
				if (errs[0] == nil) != (errs[1] == nil) {
					t.Fatalf("the servers disagree: %v", errs)
				}
				if errs[0] == nil {
					forged++
				}
			}
			if forged > 0 {
				t.Errorf("%d of %d forgeries from the previous report's factors accepted", forged, tries)
			}
		})
	}
}

// lineEquations are the equations a line forgery's v must satisfy for the
// report with the nonce: Σ_i v_i·f_i = Σ_i v_i·f_i² = 0 for the line's
// factors f of each check, and Σ_i v_i = 0.
func lineEquations(f *fixture, nonce [NonceSize]byte, factors func(*coefficients) (f, f2 []fss.Fp)) [][]fss.Fp {
	var eqs [][]fss.Fp
	for k := range checks {
		c, _ := challengeOf(f.srv[0], k, nonce)
		x, x2 := factors(&c)
		eqs = append(eqs, x, x2)
	}
	ones := make([]fss.Fp, len(eqs[0]))
	for i := range ones {
		ones[i] = 1
	}
	return append(eqs, ones)
}

// lineForgery adds to the leader's count differences a nonzero v at the
// prefixes js (a line of the tensor) that satisfies the equations eqs:
// to its prefixes, v's prefix sums.
func lineForgery(t *testing.T, f *fixture, js []int, eqs [][]fss.Fp) attack {
	t.Helper()
	v := nullVector(eqs)
	if v == nil {
		t.Fatal("no nonzero v: the equations have full rank")
	}
	m := f.s.Components()
	return attack{vector: func(id int, vec []fss.Fp) {
		if id != 0 {
			return
		}
		for i, j := range js {
			for k := j; k < f.s.bins; k++ {
				vec[k*m+int(payload.Count)] = vec[k*m+int(payload.Count)].Add(v[i])
			}
		}
	}}
}

// nullVector returns a nonzero x with Σ_i eq_i·x_i = 0 for every
// equation, or nil if there is none (Gaussian elimination over F_p).
func nullVector(eqs [][]fss.Fp) []fss.Fp {
	n := len(eqs[0])
	rows := make([][]fss.Fp, len(eqs))
	for i, e := range eqs {
		rows[i] = append([]fss.Fp(nil), e...)
	}
	pivots := make([]int, 0, len(rows)) // pivot column of each reduced row
	for c, r := 0, 0; c < n && r < len(rows); c++ {
		p := r
		for p < len(rows) && rows[p][c] == 0 {
			p++
		}
		if p == len(rows) {
			continue
		}
		rows[r], rows[p] = rows[p], rows[r]
		inv := inverse(rows[r][c])
		for j := range n {
			rows[r][j] = rows[r][j].Mul(inv)
		}
		for i := range rows {
			if i != r && rows[i][c] != 0 {
				k := rows[i][c]
				for j := range n {
					rows[i][j] = rows[i][j].Sub(k.Mul(rows[r][j]))
				}
			}
		}
		pivots = append(pivots, c)
		r++
	}
	free := -1
	for c := range n {
		if !slices.Contains(pivots, c) {
			free = c
			break
		}
	}
	if free < 0 {
		return nil
	}
	x := make([]fss.Fp, n)
	x[free] = 1
	for r, c := range pivots {
		x[c] = rows[r][free].Neg()
	}
	return x
}
