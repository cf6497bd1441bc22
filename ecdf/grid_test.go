package ecdf

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLinearGridThresholds(t *testing.T) {
	g, err := NewLinearGrid(0, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.25, 0.5, 0.75, 1}
	got := g.Thresholds()
	if g.Len() != 4 || len(got) != 4 {
		t.Fatalf("Len = %d, thresholds %v", g.Len(), got)
	}
	for i := range want {
		if got[i] != want[i] || g.Threshold(i+1) != want[i] {
			t.Errorf("τ_%d = %g, want %g", i+1, got[i], want[i])
		}
	}
	got[0] = 99 // Thresholds returns a copy
	if g.Threshold(1) != 0.25 {
		t.Error("Thresholds exposes the grid's storage")
	}
	if g.Min() != 0 || g.Max() != 1 || g.Scale() != Linear {
		t.Errorf("Min, Max, Scale = %g, %g, %v", g.Min(), g.Max(), g.Scale())
	}
}

func TestLinearGridLastThresholdIsMax(t *testing.T) {
	// 0.1·3 ≠ 0.3 in float64: τ_N must still be max exactly, so that
	// max itself is in range.
	g, err := NewLinearGrid(0.1, 0.7, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g.Threshold(3) != 0.7 {
		t.Fatalf("τ_N = %v, want 0.7", g.Threshold(3))
	}
	if b, err := g.Bin(0.7); err != nil || b != 3 {
		t.Fatalf("Bin(max) = %d, %v", b, err)
	}
}

func TestBinEdges(t *testing.T) {
	g, err := NewLinearGrid(18, 95, 77)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		x    float64
		want int
	}{
		{18, 1}, // min goes to bin 1
		{math.Nextafter(18, 19), 1},
		{19, 1}, // exactly τ_1
		{math.Nextafter(19, 20), 2},
		{94.5, 77},
		{95, 77}, // exactly τ_N = max
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			got, err := g.Bin(c.x)
			if err != nil || got != c.want {
				t.Errorf("Bin(%v) = %d, %v; want %d", c.x, got, err, c.want)
			}
		})
	}
	// Every threshold is in its own bin and the next float above it is
	// in the next bin: bins are (τ_{i−1}, τ_i].
	for i := 1; i <= g.Len(); i++ {
		tau := g.Threshold(i)
		if b, _ := g.Bin(tau); b != i {
			t.Errorf("Bin(τ_%d = %v) = %d", i, tau, b)
		}
		if i < g.Len() {
			if b, _ := g.Bin(math.Nextafter(tau, math.Inf(1))); b != i+1 {
				t.Errorf("Bin(next above τ_%d) = %d, want %d", i, b, i+1)
			}
		}
	}
}

func TestBinMatchesDefinition(t *testing.T) {
	// Bin(x) = min{i : x ≤ τ_i}, checked against a linear scan.
	r := rand.New(rand.NewPCG(1, 2))
	for _, scale := range []Scale{Linear, Log} {
		g, err := NewGrid(scale, 0.5, 1000, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for range 2000 {
			x := 0.5 + r.Float64()*999.5
			want := 1
			for x > g.Threshold(want) {
				want++
			}
			if got, err := g.Bin(x); err != nil || got != want {
				t.Fatalf("%v grid: Bin(%v) = %d, %v; want %d", scale, x, got, err, want)
			}
		}
	}
}

func TestBinRejects(t *testing.T) {
	g, err := NewLinearGrid(0, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		x          float64
		want       string
		outOfRange bool
	}{
		{math.NaN(), "NaN", false},
		{math.Inf(1), "+Inf", false},
		{math.Inf(-1), "-Inf", false},
		{math.Nextafter(0, -1), "below the grid minimum 0", true},
		{10.5, "value 10.5 is above the grid maximum 10", true},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			_, err := g.Bin(c.x)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Bin(%v) error = %v, want one containing %q", c.x, err, c.want)
			}
			if errors.Is(err, ErrOutOfRange) != c.outOfRange {
				t.Errorf("Bin(%v): errors.Is(ErrOutOfRange) = %v", c.x, !c.outOfRange)
			}
		})
	}
}

func TestBinClamped(t *testing.T) {
	g, err := NewLinearGrid(0, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		x       float64
		bin     int
		clamped bool
	}{
		{-3, 1, true}, {0, 1, false}, {5, 5, false}, {10, 10, false}, {1e300, 10, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			b, cl, err := g.binClamped(c.x)
			if err != nil || b != c.bin || cl != c.clamped {
				t.Errorf("binClamped(%v) = %d, %v, %v; want %d, %v", c.x, b, cl, err, c.bin, c.clamped)
			}
		})
	}
	for _, x := range []float64{math.NaN(), math.Inf(1)} {
		if _, _, err := g.binClamped(x); err == nil {
			t.Errorf("binClamped(%v) accepted a non-finite value", x)
		}
	}
}

func TestBinAll(t *testing.T) {
	g, err := NewLinearGrid(0, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	xs := []float64{0.5, -1, 10, 11, 3}
	if _, _, err := g.BinAll(xs, false); err == nil || !strings.Contains(err.Error(), "instance #2: value -1 is below") {
		t.Errorf("BinAll without clamping: error %v, want one naming value #2", err)
	}
	bins, clamped, err := g.BinAll(xs, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 1, 10, 10, 3}
	for i := range want {
		if bins[i] != want[i] {
			t.Errorf("bins = %v, want %v", bins, want)
			break
		}
	}
	if clamped != 2 {
		t.Errorf("clamped = %d, want 2", clamped)
	}
	if _, _, err := g.BinAll([]float64{1, math.NaN()}, true); err == nil || !strings.Contains(err.Error(), "instance #2") {
		t.Errorf("BinAll with NaN: error %v", err)
	}
}

func TestLogGrid(t *testing.T) {
	g, err := newLogGrid(1, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 100, 1000}
	for i, w := range want {
		if got := g.Threshold(i + 1); math.Abs(got-w) > 1e-12*w {
			t.Errorf("τ_%d = %v, want %v", i+1, got, w)
		}
	}
	if g.Threshold(3) != 1000 || g.Scale() != Log {
		t.Errorf("τ_N = %v, scale %v", g.Threshold(3), g.Scale())
	}
	for _, c := range []struct {
		x    float64
		want int
	}{{1, 1}, {10.5, 2}, {99, 2}, {1000, 3}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if b, err := g.Bin(c.x); err != nil || b != c.want {
				t.Errorf("Bin(%v) = %d, %v; want %d", c.x, b, err, c.want)
			}
		})
	}
	if _, err := newLogGrid(0, 10, 4); err == nil {
		t.Error("newLogGrid accepted min = 0")
	}
}

func TestGridRejects(t *testing.T) {
	cases := []struct {
		name string
		f    func() (*Grid, error)
		want string
	}{
		{"min = max", func() (*Grid, error) { return NewLinearGrid(1, 1, 4) }, "not below"},
		{"min > max", func() (*Grid, error) { return NewLinearGrid(2, 1, 4) }, "not below"},
		{"zero bins", func() (*Grid, error) { return NewLinearGrid(0, 1, 0) }, "number of bins 0"},
		{"NaN min", func() (*Grid, error) { return NewLinearGrid(math.NaN(), 1, 4) }, "minimum NaN"},
		{"Inf max", func() (*Grid, error) { return newLogGrid(1, math.Inf(1), 4) }, "maximum +Inf"},
		{"huge range", func() (*Grid, error) { return NewLinearGrid(-math.MaxFloat64, math.MaxFloat64, 4) }, "too wide"},
		{"bins finer than float64", func() (*Grid, error) { return NewLinearGrid(1, math.Nextafter(1, 2), 4) }, "use fewer bins"},
		{"negative log min", func() (*Grid, error) { return newLogGrid(-1, 1, 4) }, "not positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.f()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
		})
	}
}

func TestParseScale(t *testing.T) {
	for _, s := range []Scale{Linear, Log} {
		if got, err := ParseScale(s.String()); err != nil || got != s {
			t.Errorf("ParseScale(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseScale("cubic"); err == nil {
		t.Error("ParseScale accepted cubic")
	}
}
