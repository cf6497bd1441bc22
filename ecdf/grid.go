package ecdf

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Scale is the spacing of a grid's thresholds.
type Scale int

const (
	// Linear thresholds are evenly spaced: τ_i = min + i·(max−min)/N.
	Linear Scale = iota
	// Log thresholds are evenly spaced in log: τ_i = min·(max/min)^(i/N),
	// for data where relative error matters more than absolute error
	// (dp-ecdf §3.1).
	Log
)

// String returns "linear" or "log", the names used on the command line.
func (s Scale) String() string {
	switch s {
	case Linear:
		return "linear"
	case Log:
		return "log"
	}
	return fmt.Sprintf("Scale(%d)", int(s))
}

// ParseScale parses "linear" or "log".
// Its error is the bare phrase, for the caller to prefix with the flag
// or field it parsed ("--neighbours: ..."): it has no package prefix.
func ParseScale(s string) (Scale, error) {
	switch s {
	case "linear", "":
		return Linear, nil
	case "log":
		return Log, nil
	}
	return 0, fmt.Errorf("unknown grid scale %q (want linear or log)", s)
}

// Grid is the public, data-independent set of thresholds
// τ_1 < τ_2 < … < τ_N = max over the domain [min, max] (dp-ecdf §3.1).
// Bin i (1-based) holds the values x with τ_{i−1} < x ≤ τ_i, where
// τ_0 = min and the first bin also holds min itself, so that the prefix
// count of bin i is |{x ≤ τ_i}| and F(τ_i) is an ECDF value.
type Grid struct {
	min, max   float64
	scale      Scale
	thresholds []float64
}

// NewGrid returns a grid of n bins over [min, max] with the given scale.
func NewGrid(scale Scale, min, max float64, n int) (*Grid, error) {
	switch scale {
	case Linear:
		return NewLinearGrid(min, max, n)
	case Log:
		return newLogGrid(min, max, n)
	}
	return nil, fmt.Errorf("ecdf: unknown grid scale %v", scale)
}

// NewLinearGrid returns the grid of n evenly spaced bins over [min, max]:
// τ_i = min + i·(max−min)/n for i = 1..n, with τ_n = max exactly.
func NewLinearGrid(min, max float64, n int) (*Grid, error) {
	if err := checkDomain(min, max, n); err != nil {
		return nil, err
	}
	width := max - min
	if math.IsInf(width, 0) {
		return nil, fmt.Errorf("ecdf: grid range [%g, %g] is too wide to represent", min, max)
	}
	t := make([]float64, n)
	for i := range n - 1 {
		t[i] = min + width*float64(i+1)/float64(n)
	}
	t[n-1] = max
	return newGrid(min, max, Linear, t)
}

// newLogGrid returns the grid of n bins evenly spaced in log over
// [min, max], 0 < min < max: τ_i = min·(max/min)^(i/n), with τ_n = max
// exactly.
func newLogGrid(min, max float64, n int) (*Grid, error) {
	if err := checkDomain(min, max, n); err != nil {
		return nil, err
	}
	if min <= 0 {
		return nil, fmt.Errorf("ecdf: log grid minimum %g is not positive", min)
	}
	lo, hi := math.Log(min), math.Log(max)
	t := make([]float64, n)
	for i := range n - 1 {
		t[i] = math.Exp(lo + (hi-lo)*float64(i+1)/float64(n))
	}
	t[n-1] = max
	return newGrid(min, max, Log, t)
}

// maxBins bounds N so that a grid (and a mechanism over it) fits in memory.
const maxBins = 1 << 26

func checkDomain(min, max float64, n int) error {
	if math.IsNaN(min) || math.IsInf(min, 0) {
		return fmt.Errorf("ecdf: grid minimum %g is not a finite number", min)
	}
	if math.IsNaN(max) || math.IsInf(max, 0) {
		return fmt.Errorf("ecdf: grid maximum %g is not a finite number", max)
	}
	if !(min < max) {
		return fmt.Errorf("ecdf: grid minimum %g is not below the maximum %g", min, max)
	}
	if n < 1 || n > maxBins {
		return fmt.Errorf("ecdf: number of bins %d is not in [1, %d]", n, maxBins)
	}
	return nil
}

// newGrid checks that the thresholds are strictly increasing: with too
// many bins over too narrow a range, neighbouring thresholds round to the
// same float64 and the bins would be ill defined.
func newGrid(min, max float64, scale Scale, t []float64) (*Grid, error) {
	prev := min
	for i, v := range t {
		if !(v > prev) {
			return nil, fmt.Errorf("ecdf: %d bins over [%g, %g]: threshold %d (%g) does not exceed the previous one; use fewer bins", len(t), min, max, i+1, v)
		}
		prev = v
	}
	return &Grid{min: min, max: max, scale: scale, thresholds: t}, nil
}

// Len returns N, the number of bins (and of thresholds).
func (g *Grid) Len() int { return len(g.thresholds) }

// Min returns the lower end of the domain.
func (g *Grid) Min() float64 { return g.min }

// Max returns the upper end of the domain, τ_N.
func (g *Grid) Max() float64 { return g.max }

// Scale returns the spacing of the thresholds.
func (g *Grid) Scale() Scale { return g.scale }

// Thresholds returns a copy of τ_1, …, τ_N.
func (g *Grid) Thresholds() []float64 { return slices.Clone(g.thresholds) }

// Threshold returns τ_i for 1 ≤ i ≤ N; it panics for other i, like an
// out-of-range slice index.
func (g *Grid) Threshold(i int) float64 { return g.thresholds[i-1] }

// ErrOutOfRange is wrapped by the errors Bin returns for values outside
// [Min, Max]; binClamped maps such values to the end bins instead.
var ErrOutOfRange = errors.New("outside the grid range")

// Bin returns the 1-based bin of x, min{i : x ≤ τ_i}. NaN, ±Inf and
// values outside [Min, Max] are errors that name the value; values
// outside the range wrap ErrOutOfRange.
func (g *Grid) Bin(x float64) (int, error) {
	i, err := g.bin(x)
	if err != nil {
		return 0, fmt.Errorf("ecdf: %w", err)
	}
	return i, nil
}

// bin is Bin with errors that the caller prefixes.
func (g *Grid) bin(x float64) (int, error) {
	if err := checkFinite(x); err != nil {
		return 0, err
	}
	if x < g.min {
		return 0, fmt.Errorf("value %g is below the grid minimum %g: %w", x, g.min, ErrOutOfRange)
	}
	if x > g.max {
		return 0, fmt.Errorf("value %g is above the grid maximum %g: %w", x, g.max, ErrOutOfRange)
	}
	i, _ := slices.BinarySearch(g.thresholds, x) // first τ_i ≥ x
	return i + 1, nil
}

// binClamped is Bin with clamping: a finite x below Min goes to bin 1 and
// one above Max to bin N, and clamped reports that it was moved. NaN and
// ±Inf are still errors: they signal broken data, not an outlier.
func (g *Grid) binClamped(x float64) (bin int, clamped bool, err error) {
	if err := checkFinite(x); err != nil {
		return 0, false, err
	}
	switch {
	case x < g.min:
		return 1, true, nil
	case x > g.max:
		return g.Len(), true, nil
	}
	bin, err = g.bin(x)
	return bin, false, err
}

// BinAll bins every value of xs. With clamp false, the first value outside
// [Min, Max] is an error naming its position ("instance #j", from 1) and
// value; with clamp true such values are clamped to the end bins and
// counted in clamped. NaN and ±Inf are always errors.
func (g *Grid) BinAll(xs []float64, clamp bool) (bins []int, clamped int, err error) {
	bins = make([]int, len(xs))
	for j, x := range xs {
		var c bool
		if clamp {
			bins[j], c, err = g.binClamped(x)
		} else {
			bins[j], err = g.bin(x)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("ecdf: instance #%d: %w", j+1, err)
		}
		if c {
			clamped++
		}
	}
	return bins, clamped, nil
}

func checkFinite(x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("value %g is not a finite number", x)
	}
	return nil
}
