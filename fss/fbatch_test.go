package fss

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEvalFieldBatchEqualsPointwise checks the walker against EvalField,
// key by key, on sorted random points and chunks of up to three times
// chunkKeys keys, with both goroutine counts.
// TestEvalFieldBatchEqualsPointwise checks the walker, with each of the
// accelerated loops this machine has (accelerations), against EvalField,
// also with every node and leaf taken down the path of a rejected PRG word
// (forceResample), which real streams take too rarely to test otherwise.
func TestEvalFieldBatchEqualsPointwise(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			checkEvalFieldBatch(t)
		})
	}
}

func checkEvalFieldBatch(t *testing.T) {
	r := rand.New(testRand(83))
	for _, tc := range []fieldBatchCase{
		{1, 1, 3, 2, 1, false}, {5, 3, 70, 32, 2, false}, {8, 4, 9, 256, 1, false}, {10, 3, 130, 100, 2, false},
		{32, 2, 5, 20, 1, false}, {64, 3, 3, 10, 2, false},
		{1, 1, 3, 2, 1, true}, {5, 3, 70, 32, 2, true}, {8, 5, 9, 256, 1, true}, {20, 3, 17, 100, 2, true},
		{11, 4, 70, 300, 2, false}, {11, 4, 70, 37, 1, true},
		// m = 4 around the fused path's groups of 32 keys, both parties
		{6, 4, 31, 64, 1, false}, {6, 4, 64, 50, 2, false}, {7, 4, 33, 100, 1, true}, {5, 4, 65, 32, 2, false}, {5, 4, 96, 20, 1, true},
		{1, 4, 64, 2, 1, false}, {2, 4, 33, 3, 1, true}, {64, 4, 64, 5, 2, false},
		// m = 5, the fused path's other shape: odd key counts are party 1's
		{6, 5, 31, 64, 1, false}, {7, 5, 33, 100, 1, false}, {6, 5, 64, 50, 2, false}, {5, 5, 65, 32, 2, true},
		{7, 5, 70, 90, 1, false}, {5, 5, 96, 20, 1, true}, {2, 5, 33, 3, 1, true}, {64, 5, 64, 5, 2, false},
		{6, 5, 31, 40, 1, true}, {6, 5, 64, 40, 1, true},
	} {
		for _, reverse := range []bool{false, true} {
			t.Run(fmt.Sprint(tc, reverse), func(t *testing.T) {
				checkEvalFieldBatchCase(t, r, tc, reverse)
			})
		}
	}
}

// fieldBatchCase is a case of checkEvalFieldBatch: keys of n-bit inputs
// and m components at the given number of random points, on workers
// goroutines, with resampling forced or not.
type fieldBatchCase struct {
	n, m, keys, points, workers int
	resample                    bool
}

// checkEvalFieldBatchCase checks evalFieldBatch against EvalField for a
// case, with point j at row len(points)−1−j when reverse is set.
func checkEvalFieldBatchCase(t *testing.T, r *rand.Rand, tc fieldBatchCase, reverse bool) {
	forceResample = tc.resample
	t.Cleanup(func() { forceResample = false })
	points := sortedPoints(r, tc.points, tc.n)
	var keys []*FieldKey
	for range tc.keys {
		k0, k1, err := GenField(r.Uint64()>>uint(64-tc.n), randomFieldBeta(r, tc.m), tc.n, testRand(r.Uint64()))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, [2]*FieldKey{k0, k1}[tc.keys%2])
	}
	checkAgainstEvalField(t, keys, points, reverse, tc.workers)
}

// checkAgainstEvalField checks evalFieldBatch of keys at points, on
// workers goroutines, against EvalField, with point j at row
// len(points)−1−j when reverse is set.
func checkAgainstEvalField(t *testing.T, keys []*FieldKey, points []uint64, reverse bool, workers int) {
	t.Helper()
	m := keys[0].Components()
	out := make([][]Fp, len(keys))
	for i := range out {
		out[i] = make([]Fp, len(points)*m)
	}
	if err := evalFieldBatch(keys, points, out, nil, reverse, workers); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		for j, x := range points {
			want, _ := EvalField(k, x)
			row := j
			if reverse {
				row = len(points) - 1 - j
			}
			for c := range want {
				if got := out[i][row*m+c]; got != want[c] {
					t.Fatalf("key %d x=%d component %d: batch %d, EvalField %d", i, x, c, got, want[c])
				}
			}
		}
	}
}

// TestFieldPrefixes checks that the two servers' full-domain prefix shares
// add up to β·1[b ≤ j] for every bin b and prefix j of small grids.
func TestFieldPrefixes(t *testing.T) {
	r := rand.New(testRand(84))
	for _, bins := range []int{1, 2, 7, 16, 33} {
		dom, err := NewPrefixDomain(bins)
		if err != nil {
			t.Fatal(err)
		}
		beta := randomFieldBeta(r, 4)
		var keys [2][]*FieldKey
		for b := range bins {
			k0, k1, err := dom.GenField(b, beta, testRand(r.Uint64()))
			if err != nil {
				t.Fatal(err)
			}
			keys[0], keys[1] = append(keys[0], k0), append(keys[1], k1)
		}
		var out [2][][]Fp
		for s := range out {
			out[s] = make([][]Fp, bins)
			for i := range out[s] {
				out[s][i] = make([]Fp, bins*4)
			}
			if err := dom.FieldPrefixes(keys[s], out[s]); err != nil {
				t.Fatal(err)
			}
		}
		for b := range bins {
			for j := range bins {
				for c := range 4 {
					want := Fp(0)
					if b <= j {
						want = beta[c]
					}
					if got := out[0][b][j*4+c].Add(out[1][b][j*4+c]); got != want {
						t.Fatalf("%d bins, bin %d, prefix %d, component %d: %d, want %d", bins, b, j, c, got, want)
					}
				}
			}
		}
	}
}

func TestEvalFieldBatchRejectsBadInput(t *testing.T) {
	k0, k1, _ := GenField(3, []Fp{1}, 4, testRand(85))
	other, _, _ := GenField(3, []Fp{1, 2}, 4, testRand(86))
	for name, tc := range map[string]struct {
		keys   []*FieldKey
		points []uint64
		out    []int
	}{
		"no keys":        {nil, []uint64{1}, nil},
		"nil key":        {[]*FieldKey{k0, nil}, []uint64{1}, []int{1, 1}},
		"mixed parties":  {[]*FieldKey{k0, k1}, []uint64{1}, []int{1, 1}},
		"mixed m":        {[]*FieldKey{k0, other}, []uint64{1}, []int{1, 2}},
		"unsorted":       {[]*FieldKey{k0}, []uint64{2, 1}, []int{2}},
		"outside domain": {[]*FieldKey{k0}, []uint64{16}, []int{1}},
		"short out":      {[]*FieldKey{k0}, []uint64{1, 2}, []int{1}},
		"missing out":    {[]*FieldKey{k0, k0}, []uint64{1}, []int{1}},
	} {
		t.Run(name, func(t *testing.T) {
			out := make([][]Fp, len(tc.out))
			for i, l := range tc.out {
				out[i] = make([]Fp, l)
			}
			if err := EvalFieldBatch(tc.keys, tc.points, out); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// TestFieldValueStepsFlagRejectedWords checks that the walker's value
// steps, with each acceleration, flag a PRG word not below p wherever it
// is among the keys, and compute the other keys' values as addP does.
func TestFieldValueStepsFlagRejectedWords(t *testing.T) {
	const keys = 11 // two vector groups and a tail
	r := rand.New(testRand(85))
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			for bad := -1; bad < keys; bad++ { // -1: no rejected word
				for side := range 2 {
					t.Run(fmt.Sprint("rejected key ", bad, " side ", side), func(t *testing.T) {
						checkValueSteps(t, r, keys, bad, side)
					})
				}
			}
		})
	}
}

// checkValueSteps runs addBothValues and leafShares on random inputs
// with the word of key bad (none when bad < 0) for child side at least p;
// the leaf reads the left child's word.
func checkValueSteps(t *testing.T, r *rand.Rand, keys, bad, side int) {
	const m, c = 3, 1 // left word 1 (block 0, high), right word 4 (block 2, low)
	var parent, left, right fieldState
	for _, st := range []*fieldState{&parent, &left, &right} {
		st.val = make([][]uint64, m)
		for j := range st.val {
			st.val[j] = make([]uint64, keys)
		}
	}
	vals := make([][]block, m)
	for j := range vals {
		vals[j] = make([]block, keys+1)
	}
	vcw, mask, final := make([]uint64, keys), make([]uint64, keys), make([]uint64, keys)
	for i := range keys {
		parent.val[c][i] = r.Uint64()
		vcw[i], final[i] = r.Uint64N(Modulus), r.Uint64N(Modulus)
		mask[i] = -(r.Uint64() & 1)
		for j := range vals {
			vals[j][i] = block{r.Uint64N(Modulus), r.Uint64N(Modulus)}
		}
	}
	want, wantLeaf := uint64(0), uint64(0)
	switch {
	case bad >= 0 && side == 0:
		vals[0][bad][1], want, wantLeaf = Modulus, 1, 1
	case bad >= 0:
		vals[2][bad][0], want = ^uint64(0), 1
	}
	if rej := addBothValues(&left, &right, &parent, c, vals, m, vcw, mask); rej != want {
		t.Errorf("addBothValues: rejected = %d, want %d", rej, want)
	}
	out := make([][]Fp, keys)
	for i := range out {
		out[i] = make([]Fp, 2*m)
	}
	leafVal := [][]uint64{make([]uint64, keys), parent.val[c], make([]uint64, keys)} // component c = 1: word 1
	leafFinal := [][]uint64{make([]uint64, keys), final, make([]uint64, keys)}
	if rej := leafShares(out, m, leafVal, leafFinal, vals, mask, ^uint64(0)); rej != wantLeaf {
		t.Errorf("leafShares: rejected = %d, want %d", rej, wantLeaf)
	}
	for i := range keys {
		if i == bad {
			continue
		}
		base := addP(parent.val[c][i], vcw[i]&mask[i])
		if l, r := addP(base, vals[0][i][1]), addP(base, vals[2][i][0]); left.val[c][i] != l || right.val[c][i] != r {
			t.Errorf("key %d: children %d, %d, want %d, %d", i, left.val[c][i], right.val[c][i], l, r)
		}
		leaf := canonical(addP(addP(parent.val[c][i], vals[0][i][1]), final[i]&mask[i])).Neg()
		if got := out[i][m+c]; got != leaf {
			t.Errorf("key %d: leaf share %d, want %d", i, got, leaf)
		}
	}
}

// TestAddBothValuesFlagsRejectedWords checks the field walker's value step
// (addBothValues, with each of the accelerated loops this machine has and
// the scalar tail) against addP key by key, and that it reports a word ≥ p
// exactly when one of the words it reads is, wherever that word is: in the
// vector part or the tail, on the left or the right.
func TestAddBothValuesFlagsRejectedWords(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			r := rand.New(testRand(91))
			const m = 3
			for _, n := range []int{64, 13, 3} {
				for _, bad := range []struct{ key, side int }{{-1, 0}, {0, 0}, {n - 1, 1}, {n / 2, 1}, {7 % n, 0}} {
					t.Run(fmt.Sprintf("n=%d/bad=%v", n, bad), func(t *testing.T) {
						checkAddBothValues(t, r, m, n, bad.key, bad.side)
					})
				}
			}
		})
	}
}

// checkAddBothValues runs addBothValues for every component c < m of n
// keys on random words below p, but for the word of side of key bad
// (none when bad < 0), which is ≥ p.
func checkAddBothValues(t *testing.T, r *rand.Rand, m, n, bad, side int) {
	vals := make([][]block, m)
	for j := range vals {
		vals[j] = make([]block, n+1)
		for i := range vals[j] {
			vals[j][i] = block{r.Uint64N(Modulus), r.Uint64N(Modulus)}
		}
	}
	word := func(i, q int) *uint64 { return &vals[q/2][i][q%2] }
	for c := range m {
		left, right, parent := &fieldState{val: make([][]uint64, m)}, &fieldState{val: make([][]uint64, m)}, &fieldState{val: make([][]uint64, m)}
		for _, st := range []*fieldState{left, right, parent} {
			st.val[c] = make([]uint64, n)
		}
		vcw, mask := make([]uint64, n), make([]uint64, n)
		for i := range n {
			parent.val[c][i], vcw[i], mask[i] = r.Uint64(), r.Uint64N(Modulus), -(r.Uint64() & 1)
		}
		if bad >= 0 {
			*word(bad, side*m+c) = Modulus + r.Uint64N(1<<32-1)
		}
		rej := addBothValues(left, right, parent, c, vals, m, vcw, mask)
		if want := uint64(min(bad+1, 1)); rej != want {
			t.Fatalf("component %d: rejected = %d, want %d", c, rej, want)
		}
		for i := range n {
			base := addP(parent.val[c][i], vcw[i]&mask[i])
			if got, want := left.val[c][i], addP(base, *word(i, c)); got != want {
				t.Fatalf("component %d, key %d: left %#x, want %#x", c, i, got, want)
			}
			if got, want := right.val[c][i], addP(base, *word(i, m+c)); got != want {
				t.Fatalf("component %d, key %d: right %#x, want %#x", c, i, got, want)
			}
		}
		if bad >= 0 {
			*word(bad, side*m+c) = r.Uint64N(Modulus)
		}
	}
}

// TestLeafSharesFlagsRejectedWords is TestAddBothValuesFlagsRejectedWords
// for the walker's leaf step (leafShares), for both parties.
func TestLeafSharesFlagsRejectedWords(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			r := rand.New(testRand(92))
			for _, m := range []int{3, 4} {
				for _, n := range []int{64, 13, 8, 3} {
					for _, bad := range []struct{ key, c int }{{-1, 0}, {0, 0}, {n - 1, m - 1}, {n / 2, 1}, {7 % n, 2}} {
						for party := range 2 {
							t.Run(fmt.Sprintf("m=%d/n=%d/bad=%v/party=%d", m, n, bad, party), func(t *testing.T) {
								checkLeafShares(t, r, m, n, bad.key, bad.c, party)
							})
						}
					}
				}
			}
		})
	}
}

// checkLeafShares runs leafShares on row 2 of n keys' outputs with m
// components, on random words below p but for word c of key bad (none
// when bad < 0), which is ≥ p. A third of the keys get edge inputs
// instead: a path value of all ones, or a sum of 0 or of p − 1 (whose
// negation is 0 or 1), or words of 0.
func checkLeafShares(t *testing.T, r *rand.Rand, m, n, bad, c, party int) {
	const row = 2
	random := func(bound uint64) [][]uint64 {
		rows := make([][]uint64, m)
		for c := range rows {
			rows[c] = make([]uint64, n)
			for i := range rows[c] {
				rows[c][i] = r.Uint64N(bound)
			}
		}
		return rows
	}
	val, final := random(1<<63), random(Modulus)
	vals := make([][]block, fieldLeafBlocks(m))
	for j := range vals {
		vals[j] = make([]block, n+1)
		for i := range vals[j] {
			vals[j][i] = block{r.Uint64N(Modulus), r.Uint64N(Modulus)}
		}
	}
	for i := range n {
		for c := range m {
			switch r.IntN(9) {
			case 0:
				val[c][i] = ^uint64(0)
			case 1: // val + word ≡ 0 or p − 1, final ANDed to 0 or not
				vals[c/2][i][c%2] = r.Uint64N(Modulus)
				val[c][i] = Modulus - vals[c/2][i][c%2] - uint64(r.IntN(2))
			case 2:
				val[c][i], vals[c/2][i][c%2], final[c][i] = 0, 0, 0
			}
		}
	}
	if bad >= 0 {
		vals[c/2][bad][c%2] = Modulus + r.Uint64N(1<<32-1)
	}
	out, mask := make([][]Fp, n), make([]uint64, n)
	for i := range out {
		out[i], mask[i] = make([]Fp, 4*m), -(r.Uint64() & 1)
	}
	rej := leafShares(out, row*m, val, final, vals, mask, -uint64(party))
	if want := uint64(min(bad+1, 1)); rej != want {
		t.Fatalf("rejected = %d, want %d", rej, want)
	}
	for i := range n {
		for c := range m {
			e := canonical(addP(addP(val[c][i], vals[c/2][i][c%2]), final[c][i]&mask[i]))
			if want := negateFieldIf(e, uint64(party)); out[i][row*m+c] != want {
				t.Fatalf("key %d, component %d: %d, want %d", i, c, out[i][row*m+c], want)
			}
		}
		for j, v := range out[i] {
			if (j < row*m || j >= (row+1)*m) && v != 0 {
				t.Fatalf("key %d: element %d = %d outside row %d", i, j, v, row)
			}
		}
	}
}
