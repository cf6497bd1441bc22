package server

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
)

// ErrPolicy is wrapped by the refusal of a release whose mechanism the
// dataset's Policy does not allow: another neighbouring relation, a
// mechanism not listed, or an ε or δ above the policy's bounds.
var ErrPolicy = errcode.New(errcode.Policy, "release outside the dataset's privacy policy")

// Policy is the privacy contract of a dataset, fixed by the servers'
// configuration (a deployment's manifest) and enforced by both servers
// on every release before anything is charged: the analyst's request
// chooses only ε (up to MaxEpsilon), a mechanism among Mechanisms with a
// δ up to MaxDelta, and the components and prefixes. The zero Policy is
// replace-one neighbours, any pure ε-DP release, ε bounded by the budget
// alone.
type Policy struct {
	// Relation is the neighbouring relation every release of the dataset
	// is private under, and in which its ledger accounts: a release
	// under another relation is refused (an add/remove release at ε is
	// up to 2ε-DP under replace-one, and a replace-one guarantee says
	// nothing under add/remove).
	Relation mechanism.Relation
	// Mechanisms lists the mechanism names (mechanism.Names) a release
	// may ask for; "auto" lets the servers choose (both resolve it
	// alike, among the pure mechanisms when δ = 0). Empty allows all.
	Mechanisms []string
	// MaxDelta bounds the δ of a release per privacy unit (the
	// mechanism's δ); 0 allows pure ε-DP releases only (δ = 0).
	MaxDelta float64
	// MaxEpsilon bounds the ε of a release per privacy unit (the
	// mechanism's ε); 0 bounds it by the budget alone.
	MaxEpsilon float64
}

// approximateOnly are the mechanisms that need δ > 0.
var approximateOnly = []string{"cascade", "gaussian-tree"}

// Validate checks the policy itself: a known relation and mechanisms,
// bounds in range, and at least one allowed mechanism that fits them.
func (p Policy) Validate() error {
	if p.Relation != mechanism.ReplaceOne && p.Relation != mechanism.AddRemove {
		return fmt.Errorf("policy: unknown neighbouring relation %v (want replace or addremove)", p.Relation)
	}
	for _, name := range p.Mechanisms {
		if !slices.Contains(mechanism.Names, name) {
			return fmt.Errorf("policy: unknown mechanism %q (valid: %s)", name, strings.Join(mechanism.Names, ", "))
		}
	}
	switch {
	case !(p.MaxDelta >= 0 && p.MaxDelta < 1):
		return fmt.Errorf("policy: maximum δ %v is not in [0, 1)", p.MaxDelta)
	case math.IsNaN(p.MaxEpsilon) || math.IsInf(p.MaxEpsilon, 0) || p.MaxEpsilon < 0:
		return fmt.Errorf("policy: maximum ε %v is not a non-negative finite number", p.MaxEpsilon)
	case p.MaxDelta == 0 && len(p.Mechanisms) > 0 && !slices.ContainsFunc(p.Mechanisms, isPure):
		return fmt.Errorf("policy: the mechanisms %v need δ > 0, but the maximum δ is 0 (pure ε-DP only): allow tree, kary or auto, or a maximum δ > 0", p.Mechanisms)
	}
	return nil
}

func isPure(name string) bool { return !slices.Contains(approximateOnly, name) }

// allowed returns the mechanism names a release may ask for.
func (p Policy) allowed() []string {
	if len(p.Mechanisms) == 0 {
		return mechanism.Names
	}
	return p.Mechanisms
}

// Allow returns nil if the policy allows a release with mechanism m,
// and an error wrapping ErrPolicy naming the dataset's setting and what
// to ask for instead otherwise. The mechanism's own validity (ε > 0, a
// δ the mechanism accepts, …) is left to its constructor.
func (p Policy) Allow(m mechanism.Params) error {
	name := m.Name
	if name == "" {
		name = "tree" // payload.NewMechanism's default
	}
	switch {
	case m.Relation != p.Relation:
		return fmt.Errorf("%w: the dataset is private under %s neighbours, the release asks for %s: ask for %s (the servers' configuration fixes it: a manifest's mechanism.neighbours)",
			ErrPolicy, p.Relation, m.Relation, p.Relation)
	case !slices.Contains(p.allowed(), name):
		return fmt.Errorf("%w: the dataset allows the mechanisms %s, the release asks for %q: ask for one of them",
			ErrPolicy, strings.Join(p.allowed(), ", "), name)
	case p.MaxDelta == 0 && m.Delta != 0:
		return fmt.Errorf("%w: the dataset allows pure ε-DP releases only (maximum δ 0), the release asks for δ = %g: ask for δ = 0 with a pure mechanism (tree, kary or auto)",
			ErrPolicy, m.Delta)
	case !(m.Delta <= p.MaxDelta):
		return fmt.Errorf("%w: the dataset allows δ ≤ %g per release, the release asks for δ = %g: ask for at most %g",
			ErrPolicy, p.MaxDelta, m.Delta, p.MaxDelta)
	case p.MaxEpsilon > 0 && !(m.Epsilon <= p.MaxEpsilon):
		return fmt.Errorf("%w: the dataset allows ε ≤ %g per release, the release asks for ε = %g: ask for at most %g",
			ErrPolicy, p.MaxEpsilon, m.Epsilon, p.MaxEpsilon)
	}
	return nil
}
