package analysis

import (
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Guarantee states the privacy of release rel and its noise: the one
// sentence every command prints for a release.
func Guarantee(rel *aggregation.Release) string {
	units, _ := payload.PrivacyUnits(rel.Spec.Components)
	m := rel.Mechanism(rel.Spec.Components[0])
	detail := fmt.Sprintf("%s mechanism; ε=%.6g per privacy unit × %d: %v", m.Name(), rel.Spec.Mechanism.Epsilon, units, rel.Spec.Components)
	return guarantee(rel.Epsilon(), rel.Delta(), rel.Spec.Mechanism.Relation, detail, rel.Servers)
}

// guarantee is the guarantee sentence: (ε, δ)-DP under the relation,
// with detail in parentheses and, with more than one server, what each
// server's own noise buys.
func guarantee(epsilon, delta float64, r mechanism.Relation, detail string, servers int) string {
	g := fmt.Sprintf("(ε=%.6g, δ=%.6g)-DP under %s neighbours (%s)", epsilon, delta, r, detail)
	if servers > 1 {
		g += fmt.Sprintf("; each of %d servers adds its own full-scale noise, so the output stays private against one corrupt server, at %d× the mechanism's variance", servers, servers)
	}
	return g
}
