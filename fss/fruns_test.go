package fss

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFieldPrefixRunsEqualFieldPrefixes checks that FieldPrefixRuns hands
// each key every prefix once, in ascending runs of visitRun prefixes (the
// last of at most visitRun), each starting at a multiple of visitRun, with
// the shares FieldPrefixes writes: on grids around the
// run length, with more keys than a chunk on several goroutines, and
// with the walker's resampling forced.
func TestFieldPrefixRunsEqualFieldPrefixes(t *testing.T) {
	r := rand.New(testRand(87))
	for _, tc := range []struct {
		bins, m, keys, workers int
		resample               bool
	}{
		{1, 4, 3, 1, false}, {7, 4, 5, 1, false}, {16, 5, 9, 2, false}, {17, 4, 70, 2, false},
		{33, 5, 3, 1, true}, {100, 4, 130, 2, false}, {1024, 4, 2, 1, false}, {1030, 5, 2, 1, true},
		{100, 5, 70, 2, false}, {70, 5, 33, 1, true}, {1030, 5, 64, 2, false},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			forceResample = tc.resample
			t.Cleanup(func() { forceResample = false })
			checkFieldPrefixRuns(t, r, tc.bins, tc.m, tc.keys, tc.workers)
		})
	}
}

// checkFieldPrefixRuns is one case of TestFieldPrefixRunsEqualFieldPrefixes.
func checkFieldPrefixRuns(t *testing.T, r *rand.Rand, bins, m, n, workers int) {
	dom, err := NewPrefixDomain(bins)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]*FieldKey, n)
	want, got := make([][]Fp, n), make([][]Fp, n)
	next := make([]int, n) // per key: the first row of the next run
	for i := range keys {
		k0, k1, err := dom.GenField(r.IntN(bins), randomFieldBeta(r, m), testRand(r.Uint64()))
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = [2]*FieldKey{k0, k1}[bins%2] // one party per batch
		want[i], got[i] = make([]Fp, bins*m), make([]Fp, bins*m)
	}
	if err := dom.fieldPrefixes(keys, want, nil, workers); err != nil {
		t.Fatal(err)
	}
	bad := make([]string, n) // per key: its first wrong run
	visit := func(k, row int, run []Fp) {
		rows := len(run) / m
		switch {
		case bad[k] != "":
		case len(run)%m != 0 || rows == 0 || rows > visitRun:
			bad[k] = fmt.Sprintf("a run of %d elements", len(run))
		case row != next[k]:
			bad[k] = fmt.Sprintf("rows %d … %d, want a run from row %d", row, row+rows-1, next[k])
		case row%visitRun != 0 || rows < visitRun && row+rows != bins:
			bad[k] = fmt.Sprintf("rows %d … %d: not a run of %d from a multiple of %d, nor the last", row, row+rows-1, visitRun, visitRun)
		}
		next[k] = row + rows
		copy(got[k][row*m:], run)
	}
	if err := dom.fieldPrefixes(keys, nil, visit, workers); err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if bad[k] == "" && next[k] != bins {
			bad[k] = fmt.Sprintf("no run from row %d", next[k])
		}
		if bad[k] != "" {
			t.Fatalf("key %d: %s", k, bad[k])
		}
		for e := range want[k] {
			if got[k][e] != want[k][e] {
				t.Fatalf("key %d, prefix %d, component %d: run %d, FieldPrefixes %d", k, e/m, e%m, got[k][e], want[k][e])
			}
		}
	}
}

func TestFieldPrefixRunsRejectsBadInput(t *testing.T) {
	dom, _ := NewPrefixDomain(16)
	k0, _, _ := dom.GenField(3, []Fp{1}, testRand(88))
	other, _ := NewPrefixDomain(100)
	for name, tc := range map[string]struct {
		dom   PrefixDomain
		keys  []*FieldKey
		visit func(key, row int, run []Fp)
	}{
		"nil visit":    {dom, []*FieldKey{k0}, nil},
		"no keys":      {dom, nil, func(int, int, []Fp) {}},
		"nil key":      {dom, []*FieldKey{k0, nil}, func(int, int, []Fp) {}},
		"other domain": {other, []*FieldKey{k0}, func(int, int, []Fp) {}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := tc.dom.FieldPrefixRuns(tc.keys, tc.visit); err == nil {
				t.Error("accepted")
			}
		})
	}
}
