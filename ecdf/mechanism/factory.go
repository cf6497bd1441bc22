package mechanism

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Names lists the mechanism names New accepts.
var Names = []string{"tree", "kary", "cascade", "gaussian-tree", "auto", "partitioned"}

// New returns the mechanism named p.Name:
//
//   - "tree": newTree, the binary tree of dp-ecdf Eq. (2), pure ε-DP;
//   - "kary": newKAry, the k-ary tree with subtraction (k = p.K, 0 for
//     the best k), pure ε-DP (or Theorem 3's (ε, δ) scale when δ > 0);
//   - "cascade": newCascade, Cascade Sampling, (ε, δ)-DP;
//   - "gaussian-tree": newGaussianTree, the binary tree with discrete
//     Gaussian nodes, (ε, δ)-DP;
//   - "auto": among the pure ε-DP mechanisms when p.Delta = 0, and all of
//     them when p.Delta > 0, the one with the least MeanVariance for
//     p.Bins, ε, δ and relation (for "kary", over every k);
//   - "partitioned": newPartitioned, the grid cut into three parts
//     (partitionBins), each released by its own "auto" mechanism at the
//     full ε, pure ε-DP by parallel composition (δ must be 0): what
//     ROC releases use in place of "auto" where it answers the grid's
//     ends with less noise (analysis.ROCParams).
//
// Every error matches ErrInvalidParams (errors.Is); an unknown name also
// matches ErrUnknownMechanism, and noise too large for the share domain
// ErrNoiseTooLarge.
func New(p Params) (Mechanism, error) {
	m, err := build(p)
	if err != nil {
		return nil, invalidParams{fmt.Errorf("mechanism: %w", err)}
	}
	return m, nil
}

// ErrInvalidParams is matched by every error of New: the Params name no
// mechanism, or are out of its range. The error's text says which
// parameter and what to change.
var ErrInvalidParams = errors.New("invalid mechanism parameters")

// ErrUnknownMechanism is matched by New's error for a name not in Names.
var ErrUnknownMechanism = errors.New("unknown mechanism")

// invalidParams is an error of kind ErrInvalidParams that keeps the text
// of err.
type invalidParams struct{ err error }

func (e invalidParams) Error() string   { return e.err.Error() }
func (e invalidParams) Unwrap() []error { return []error{ErrInvalidParams, e.err} }

// build is New without the package prefix.
func build(p Params) (Mechanism, error) {
	switch p.Name {
	case "tree":
		return newTree(p)
	case "kary":
		return newKAry(p)
	case "cascade":
		return newCascade(p)
	case "gaussian-tree":
		return newGaussianTree(p)
	case "auto":
		return newAuto(p)
	case "partitioned":
		return newPartitioned(p)
	}
	return nil, fmt.Errorf("%w %q (valid: %s)", ErrUnknownMechanism, p.Name, strings.Join(Names, ", "))
}

// newAuto builds every candidate and keeps the least mean variance.
func newAuto(p Params) (Mechanism, error) {
	names := []string{"tree", "kary"}
	if p.Delta > 0 {
		names = append(names, "cascade", "gaussian-tree")
	}
	var best Mechanism
	for _, name := range names {
		q := p
		q.Name, q.K = name, 0
		if name == "kary" {
			q.K = p.K
		}
		m, err := build(q)
		if err != nil {
			return nil, fmt.Errorf("auto: %w", err)
		}
		if best == nil || m.MeanVariance() < best.MeanVariance() {
			best = m
		}
	}
	return best, nil
}

// checkParams validates the parameters common to every mechanism; mech
// prefixes the error.
func checkParams(mech string, p Params) error {
	switch {
	case p.Bins < 1 || p.Bins > maxKAryBins:
		return fmt.Errorf("%s: bins %d: must be between 1 and 2^40", mech, p.Bins)
	case math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Epsilon <= 0:
		return fmt.Errorf("%s: epsilon %v: must be positive and finite", mech, p.Epsilon)
	case math.IsNaN(p.Delta) || p.Delta < 0 || p.Delta >= 1:
		return fmt.Errorf("%s: delta %v: must be in [0, 1)", mech, p.Delta)
	case p.Relation != ReplaceOne && p.Relation != AddRemove:
		return fmt.Errorf("%s: unknown neighbouring relation %v", mech, p.Relation)
	}
	return nil
}
