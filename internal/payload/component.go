package payload

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// Component names one entry of a party's payload vector (core.Component,
// public so that another module can name it).
type Component = core.Component

// The components, core's.
const (
	Count       = core.Count
	Label       = core.Label
	NotLabel    = core.NotLabel
	Probability = core.Probability
	// NumComponents is m, the length of every payload vector.
	NumComponents = 4
)

// ProbabilityScale is the fixed-point scale 2^32 of the Probability
// component: a sum over n ≤ 2^30 parties lies in [0, 2^62], so with the
// noise, whose standard deviation mechanism.MaxPrefixStdDev bounds by
// 2^50 (|noise| < 2^62 except with negligible probability), it decodes
// exactly from the 64-bit share domain as an int64.
const ProbabilityScale = 1 << 32

// ParseComponent parses count, label, notlabel or probability.
// Its error is the bare phrase, for the caller to prefix with the flag
// or field it parsed ("--neighbours: ..."): it has no package prefix.
func ParseComponent(s string) (Component, error) {
	var names []string
	for c := range Component(NumComponents) {
		if s == c.String() {
			return c, nil
		}
		names = append(names, c.String())
	}
	return 0, fmt.Errorf("unknown payload component %q (want %s)", s, strings.Join(names, ", "))
}

// unit is the component's Scale as the mechanism's sensitivity
// multiplier Params.Unit.
func unit(c Component) uint64 { return uint64(c.Scale()) }

// NewMechanism builds the noise mechanism p names (mechanism.New; an
// empty name means "tree", the mechanism of dp-ecdf Eq. 2).
func NewMechanism(p mechanism.Params) (mechanism.Mechanism, error) {
	m, err := newMechanism(p)
	if err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	return m, nil
}

// newMechanism is NewMechanism without the package prefix.
func newMechanism(p mechanism.Params) (mechanism.Mechanism, error) {
	if p.Name == "" {
		p.Name = "tree"
	}
	return mechanism.New(p)
}

// ComponentMechanism returns the mechanism whose noise is added to the
// prefix sums of component c, so that their release is (ε, δ)-DP under
// p.Relation with (ε, δ) = (p.Epsilon, p.Delta), in the component's
// integer units.
//
//   - Count: p itself. One instance changes the prefix counts exactly as
//     the mechanism's relation assumes.
//   - Label, NotLabel, Probability: adding an instance with weight
//     w ∈ [0, 1] in bin a adds w·1[i ≥ a] to every prefix i, a weighted
//     suffix, which the mechanism's add/remove guarantee covers (its node
//     shift scaled by w has ℓ1 norm at most Δ and ℓ2 norm at most Δ₂).
//     Under replace-one, a change of bin or of weight is one removal and
//     one addition, hence the add/remove mechanism at ε/2 (group privacy
//     for 2 steps, with δ/(1 + e^{ε/2}) so that the pair is (ε, δ)). For
//     the tree mechanism this costs 2⌈(L+1)/2⌉ against the replace-one
//     Δ = L: L + 1 for odd L, L + 2 for even L.
//   - Probability is in fixed point: one instance moves its prefix sums
//     by up to ProbabilityScale integer units, so the mechanism runs with
//     the sensitivity multiplier Unit = ProbabilityScale (mechanism.Params):
//     every Laplace scale and Gaussian σ is 2^32 times that of Label, at
//     the same ε and δ, and the variance 2^64 times. (Dividing ε by 2^32
//     instead, as before, is right only for noise proportional to 1/ε: it
//     under-noised the Gaussian and ℓ2-Laplace mechanisms by a factor
//     10^4–10^7.)
//
// The error wraps mechanism.ErrNoiseTooLarge when the component's noise
// would not fit the 64-bit share domain (mechanism.MaxPrefixStdDev).
// p.Unit is ignored: the component decides it.
func ComponentMechanism(p mechanism.Params, c Component) (mechanism.Mechanism, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("payload: unknown payload component %d", c)
	}
	if c != Count {
		if p.Relation == mechanism.ReplaceOne {
			p.Epsilon /= 2
			p.Delta /= 1 + math.Exp(p.Epsilon)
		}
		p.Relation = mechanism.AddRemove
	}
	p.Unit = unit(c)
	m, err := newMechanism(p)
	if err != nil {
		return nil, fmt.Errorf("payload: noise of component %v: %w", c, err)
	}
	return m, nil
}

// componentSeedDomain separates the derivation of component seeds from
// the mechanisms' own uses of a seed: the ASCII bytes "comp".
const componentSeedDomain uint32 = 0x636f6d70

// ComponentSeed derives the seed of component c's noise from a release
// seed, so that the components of one release get independent noise
// (reusing one noise across components would reveal their difference).
func ComponentSeed(s noise.Seed, c Component) noise.Seed {
	st := s.Stream(componentSeedDomain, uint64(c))
	var out noise.Seed
	for i := 0; i < len(out); i += 8 {
		v := st.Uint64()
		for j := range 8 {
			out[i+j] = byte(v >> (8 * j))
		}
	}
	return out
}

// ID is a random 16-byte identifier of a report, release or query
// (core.ID).
type ID = core.ID

// ReportID identifies one party's report; ReleaseID one release.
type (
	ReportID  = ID
	ReleaseID = ID
)

// NewID draws an ID from crypto/rand.
func NewID() (ID, error) {
	var id ID
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("payload: drawing an identifier from crypto/rand: %w", err)
	}
	return id, nil
}

// CompareIDs orders IDs bytewise (without converting them to strings,
// which allocated twice per comparison of a sort).
func CompareIDs(a, b ID) int { return bytes.Compare(a[:], b[:]) }

// Digest is SHA-256 over the sorted concatenation of ids: two servers
// holding the same set of reports compute the same digest.
func Digest(ids []ID) [32]byte {
	sorted := slices.Clone(ids)
	slices.SortFunc(sorted, CompareIDs)
	h := sha256.New()
	for _, id := range sorted {
		h.Write(id[:])
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}
