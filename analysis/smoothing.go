package analysis

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/roc"
)

// DefaultSmoothing is the smoothing every command applies unless told
// otherwise: dp-ecdf Eq. 3 with p = 2, pointwise.
const DefaultSmoothing = "l2"

// ErrUnknownSmoothing is wrapped by the refusal of a smoothing method
// that smooth.Apply does not know.
var ErrUnknownSmoothing = errors.New("unknown smoothing method")

// smoothingNames describes each method of smooth.Apply for text output.
var smoothingNames = map[string]string{
	"none":    "none (raw private curve)",
	"l1":      "dp-ecdf Eq. 3, p = 1, pointwise (isotonic L1 + clip to [0,1])",
	"l2":      "dp-ecdf Eq. 3, p = 2, pointwise (PAVA + clip to [0,1])",
	"tree-l2": "dp-ecdf Eq. 3, p = 2, over the mechanism's noise nodes (GLS projection)",
}

// CheckSmoothing is the one validation of a smoothing method: it returns
// method ("" means DefaultSmoothing) if smooth.Apply knows it and it can
// smooth a curve read at prefixes of the bins bins (tree-l2 follows the
// noise of every prefix, so it needs all of them; prefixes 0 means all).
func CheckSmoothing(method string, prefixes, bins int) (string, error) {
	if method == "" {
		method = DefaultSmoothing
	}
	if !slices.Contains(smooth.Methods, method) {
		return "", fmt.Errorf("analysis: %w %q (valid: %s)", ErrUnknownSmoothing, method, strings.Join(smooth.Methods, ", "))
	}
	if method == "tree-l2" && prefixes > 0 && prefixes < bins {
		return "", fmt.Errorf("analysis: smoothing tree-l2 follows the noise of every prefix: query all %d (prefixes 0), not %d", bins, prefixes)
	}
	return method, nil
}

// Describe describes a smoothing method for text output.
func Describe(method string) string {
	if d, ok := smoothingNames[method]; ok {
		return d
	}
	return method
}

// smoother returns the smoothing of a curve by method over the noise
// pattern of m, or nil for "none".
func smoother(method string, m mechanism.Mechanism) roc.Smoother {
	if method == "none" {
		return nil
	}
	return func(f []float64) ([]float64, error) { return smooth.Apply(method, f, m) }
}
