package roc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBinningFloor: known values (one class per bin adds nothing; one
// bin of a = b = 1 gives √(2π)/8·√2) and refused inputs.
func TestBinningFloor(t *testing.T) {
	bridge := math.Sqrt(2*math.Pi) / 8
	for _, tc := range []struct {
		name     string
		pos, neg []float64
		want     float64
		wantErr  bool
	}{
		{"separated classes", []float64{0, 5}, []float64{7, 7}, 0, false},
		{"one mixed bin", []float64{1}, []float64{1}, bridge * math.Sqrt2, false},
		{"mixed and pure bins", []float64{4, 4, 6}, []float64{4, 6, 6}, bridge * math.Sqrt(4*4*8) / 36, false},
		{"unequal lengths", []float64{1, 2}, []float64{1}, 0, true},
		{"no bins", nil, nil, 0, true},
		{"decreasing prefix", []float64{3, 2}, []float64{1, 2}, 0, true},
		{"one class only", []float64{0, 0}, []float64{1, 2}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BinningFloor(tc.pos, tc.neg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("floor %g, want %g", got, tc.want)
			}
		})
	}
}

// TestBinningFloorMatchesRandomOrder: when the instances of each bin are
// in random order between the classes, the mean area between the exact
// curve and the binned one over many data sets is BinningFloor. The
// tolerance is 4 standard errors of the mean plus the Brownian-bridge
// limit's own error, relative O(1/√m) for bins of at least m instances
// of each class (taken as 1/√m).
func TestBinningFloorMatchesRandomOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 7))
	counts := [][2]int{{400, 2400}, {600, 1200}, {900, 900}, {1500, 400}} // (positives, negatives) per bin
	var bpos, bneg []float64
	var pp, pn float64
	for _, c := range counts {
		pp, pn = pp+float64(c[0]), pn+float64(c[1])
		bpos, bneg = append(bpos, pp), append(bneg, pn)
	}
	binned, err := FromPrefixes(bpos, bneg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := BinningFloor(bpos, bneg)
	if err != nil {
		t.Fatal(err)
	}
	const reps = 200
	var sum, sum2 float64
	for range reps {
		var labels []int
		for _, c := range counts {
			bin := make([]int, c[0]+c[1])
			for k := range c[0] {
				bin[k] = 1
			}
			rng.Shuffle(len(bin), func(i, j int) { bin[i], bin[j] = bin[j], bin[i] })
			labels = append(labels, bin...)
		}
		order := make([]int, len(labels)) // every instance its own bin, in score order
		for k := range order {
			order[k] = k + 1
		}
		pos, neg, err := ExactPrefixes(order, labels, len(labels))
		if err != nil {
			t.Fatal(err)
		}
		exact, err := FromPrefixes(pos, neg, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := AreaError(exact, binned)
		if err != nil {
			t.Fatal(err)
		}
		sum, sum2 = sum+a, sum2+a*a
	}
	mean := sum / reps
	se := math.Sqrt((sum2/reps - mean*mean) / (reps - 1))
	if tol := 4*se + want/math.Sqrt(400); math.Abs(mean-want) > tol {
		t.Errorf("mean area %g over %d random orders, BinningFloor %g (tolerance %g)", mean, reps, want, tol)
	}
	t.Logf("mean area %g ± %g, BinningFloor %g", mean, se, want)
}
