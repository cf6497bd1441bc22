package fss

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// genMany returns the keys of count random comparison functions and the
// brute-force sum Σ f at each point.
func genMany(t testing.TB, r *rand.Rand, count, n, m int, points []uint64) (k0, k1 []*Key, want []uint64) {
	want = make([]uint64, len(points)*m)
	for range count {
		alpha := r.Uint64() >> uint(64-n)
		beta := randomBeta(r, m)
		a, b, err := Gen(alpha, beta, n, testRand(r.Uint64()))
		if err != nil {
			t.Fatal(err)
		}
		k0, k1 = append(k0, a), append(k1, b)
		for j, x := range points {
			for c, v := range reference(alpha, beta, x) {
				want[j*m+c] += v
			}
		}
	}
	return k0, k1, want
}

// sortedPoints returns count distinct random points below 2^n, sorted.
func sortedPoints(r *rand.Rand, count, n int) []uint64 {
	seen := map[uint64]bool{}
	for len(seen) < count {
		seen[r.Uint64()>>uint(64-n)] = true
	}
	points := make([]uint64, 0, count)
	for x := range seen {
		points = append(points, x)
	}
	slices.Sort(points)
	return points
}

// TestSumBatchEqualsPointwise checks the batch walker, with each of the
// accelerated loops this machine has (accelerations), against Eval.
func TestSumBatchEqualsPointwise(t *testing.T) {
	for _, accel := range accelerations() {
		t.Run(accel.name, func(t *testing.T) {
			defer accel.use()()
			checkSumBatch(t)
		})
	}
}

func checkSumBatch(t *testing.T) {
	r := rand.New(testRand(20))
	for _, tc := range []struct{ n, m, keys, points int }{
		{1, 1, 3, 2}, {5, 3, 40, 32}, {8, 3, 40, 256}, {6, 4, 9, 64}, {10, 1, 70, 1024}, {10, 3, 33, 100}, {32, 3, 65, 50}, {64, 2, 5, 20},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			points := sortedPoints(r, tc.points, tc.n)
			k0, k1, want := genMany(t, r, tc.keys, tc.n, tc.m, points)
			acc0 := make([]uint64, len(want))
			acc1 := make([]uint64, len(want))
			if err := SumBatch(k0, points, acc0, 0); err != nil {
				t.Fatal(err)
			}
			if err := SumBatch(k1, points, acc1, 0); err != nil {
				t.Fatal(err)
			}
			for j, x := range points {
				for c := 0; c < tc.m; c++ {
					var pointwise uint64
					for _, k := range k0 {
						y, _ := Eval(k, x)
						pointwise += y[c]
					}
					if acc0[j*tc.m+c] != pointwise {
						t.Fatalf("%+v: party 0 batch %d ≠ pointwise %d at x=%d", tc, acc0[j*tc.m+c], pointwise, x)
					}
					if got := acc0[j*tc.m+c] + acc1[j*tc.m+c]; got != want[j*tc.m+c] {
						t.Fatalf("%+v: Σ shares = %d, Σ f = %d at x=%d", tc, got, want[j*tc.m+c], x)
					}
				}
			}
		})
	}
}

func TestSumBatchCountsBlocks(t *testing.T) {
	r := rand.New(testRand(21))
	n, m := 8, 3
	for _, count := range []int{1, 5, 256} {
		points := sortedPoints(r, count, n)
		k0, _, _ := genMany(t, r, 40, n, m, points)
		blocks, err := sumBatch(k0, points, make([]uint64, count*m), false, 2)
		if err != nil {
			t.Fatal(err)
		}
		nodes, perKey, err := BatchCost(n, m, points)
		if err != nil {
			t.Fatal(err)
		}
		if blocks != perKey*len(k0) {
			t.Errorf("%d points: %d AES blocks, BatchCost says %d per key × %d keys", count, blocks, perKey, len(k0))
		}
		if count == 1 && (nodes != n+1 || perKey != n*(1+(m+1)/2)+(m+1)/2) {
			t.Errorf("one point: %d nodes, %d blocks; want %d, %d", nodes, perKey, n+1, n*(1+(m+1)/2)+(m+1)/2)
		}
		if count == 1<<n && (nodes != 1<<(n+1)-1 || perKey != (1<<n-1)*(2+m)+(1<<n)*((m+1)/2)) {
			t.Errorf("full domain: %d nodes, %d blocks", nodes, perKey)
		}
	}
}

func TestSumBatchRejectsBadInput(t *testing.T) {
	k0, k1, _ := Gen(3, []uint64{1}, 4, testRand(22))
	other, _, _ := Gen(3, []uint64{1, 2}, 4, testRand(23))
	for name, tc := range map[string]struct {
		keys   []*Key
		points []uint64
		acc    int
	}{
		"no keys":        {nil, []uint64{1}, 1},
		"nil key":        {[]*Key{k0, nil}, []uint64{1}, 1},
		"mixed parties":  {[]*Key{k0, k1}, []uint64{1}, 1},
		"mixed m":        {[]*Key{k0, other}, []uint64{1}, 1},
		"unsorted":       {[]*Key{k0}, []uint64{2, 1}, 2},
		"repeated":       {[]*Key{k0}, []uint64{2, 2}, 2},
		"outside domain": {[]*Key{k0}, []uint64{16}, 1},
		"short acc":      {[]*Key{k0}, []uint64{1, 2}, 1},
		"long acc":       {[]*Key{k0}, []uint64{1, 2}, 3},
	} {
		if err := SumBatch(tc.keys, tc.points, make([]uint64, tc.acc), 0); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestSumBatchAllocatesPerCallOnly checks that allocations do not grow
// with the number of keys or points: buffers are per call and per worker.
func TestSumBatchAllocatesPerCallOnly(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops walkers at random under -race")
	}
	r := rand.New(testRand(24))
	allocs := func(keys, points int) float64 {
		p := sortedPoints(r, points, 10)
		k0, _, _ := genMany(t, r, keys, 10, 3, nil)
		acc := make([]uint64, points*3)
		return testing.AllocsPerRun(5, func() {
			if _, err := sumBatch(k0, p, acc, false, 2); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(2*chunkKeys, 16), allocs(6*chunkKeys, 256)
	if small != large {
		t.Errorf("%v allocations for %d keys at 16 points, %v for %d keys at 256 points", small, 2*chunkKeys, large, 6*chunkKeys)
	}
}
