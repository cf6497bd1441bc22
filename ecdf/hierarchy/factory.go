package hierarchy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Names lists the node-count mechanisms New accepts.
var Names = []string{"auto", "counting-on-trees", "tree", "kary", "cascade", "gaussian-tree"}

// ErrUnknownMechanism is matched by New's error for a name not in Names.
var ErrUnknownMechanism = errors.New("unknown node-count mechanism")

// New returns the node-count mechanism name over the tree of p (Bins,
// Arity):
//
//   - "counting-on-trees": NewCountingOnTrees(p), (ε,δ)-DP, δ > 0 and α > 0;
//   - "tree", "kary" (best k), pure ε-DP, and "cascade", "gaussian-tree",
//     (ε,δ)-DP: the prefix mechanism of package mechanism over the bins,
//     each node read as a difference of two prefixes (FromPrefixes);
//   - "auto": among those that p allows (the (ε,δ) ones when δ > 0,
//     counting-on-trees when α > 0 too), the least PredictedMRMSE(α):
//     a choice made from the public parameters alone.
func New(name string, p Params) (NodeMechanism, error) {
	t, err := NewTree(p.Bins, p.Arity)
	if err != nil {
		return nil, err
	}
	switch name {
	case "counting-on-trees":
		return NewCountingOnTrees(p)
	case "tree", "kary", "cascade", "gaussian-tree":
		delta := p.Delta
		if name == "tree" || name == "kary" {
			delta = 0
		}
		m, err := mechanism.New(mechanism.Params{Name: name, Bins: p.Bins, Epsilon: p.Epsilon, Delta: delta, Relation: p.Relation})
		if err != nil {
			return nil, fmt.Errorf("hierarchy: %w", err)
		}
		return FromPrefixes(m, t)
	case "auto":
		candidates := []string{"tree", "kary"}
		if p.Delta > 0 {
			candidates = append(candidates, "cascade", "gaussian-tree")
			if p.Alpha > 0 {
				candidates = append(candidates, "counting-on-trees")
			}
		}
		var best NodeMechanism
		least := 0.0
		for _, c := range candidates {
			m, err := New(c, p)
			if err != nil {
				return nil, err
			}
			if e := m.PredictedMRMSE(p.Alpha); best == nil || e < least {
				best, least = m, e
			}
		}
		return best, nil
	}
	return nil, fmt.Errorf("hierarchy: %w %q (valid: %s)", ErrUnknownMechanism, name, strings.Join(Names, ", "))
}
