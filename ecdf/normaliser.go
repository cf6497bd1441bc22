package ecdf

import (
	"errors"
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
)

// Normaliser is the n a private ECDF is divided by, F̂(τ_i) = ĉ_i/n, and
// what a reader may know of it (dp-ecdf §2):
//
//   - under replace-one neighbours n is public: the exact number of
//     instances, which no neighbouring data set changes;
//   - under add/remove n is private — adding one instance changes it, so
//     releasing it exactly would tell D from D + x — and the normaliser is
//     a released noisy total instead: the Count prefix ĉ_N = c_N + η(N),
//     or P̂(N) + M̂(N) for a release of the {Label, NotLabel} pair.
//     Post-processing of the same release: no further budget. A noisy
//     total below one instance is raised to 1 (post-processing too, so
//     that F̂ stays defined), and Note says so.
//
// Every output that prints n embeds a Normaliser, so that it says which
// of the two it is (JSON keys n, n_public and n_note).
type Normaliser struct {
	// N is the normaliser: the number of instances when Public, else the
	// noisy total (at least 1).
	N int64 `json:"n"`
	// Public is true under replace-one, where N is the exact, public n.
	Public bool `json:"n_public"`
	// Note, when not empty, says that the noisy total was below one
	// instance and N was raised to 1.
	Note string `json:"n_note,omitempty"`
}

// NewNormaliser returns the normaliser of a release under relation r:
// n, the public number of instances, under replace-one (it must be
// positive: the ECDF of an empty data set is undefined); the released
// noisy total under add/remove, raised to 1 when below, with n ignored
// (an analyst under add/remove must not have it).
func NewNormaliser(r mechanism.Relation, n, noisyTotal int64) (Normaliser, error) {
	switch r {
	case mechanism.ReplaceOne:
		if n < 1 {
			return Normaliser{}, errors.New("ecdf: no instances: the ECDF of an empty data set is undefined")
		}
		return Normaliser{N: n, Public: true}, nil
	case mechanism.AddRemove:
		if noisyTotal < 1 {
			note := fmt.Sprintf("the noisy total %d is below one instance and was raised to 1 (post-processing; too few instances for this ε)", noisyTotal)
			return Normaliser{N: 1, Note: note}, nil
		}
		return Normaliser{N: noisyTotal}, nil
	}
	return Normaliser{}, fmt.Errorf("ecdf: unknown neighbouring relation %v", r)
}

// String states the normaliser for text output, e.g. "n = 10000 (public
// under replace neighbours)" or "n ≈ 9987 (noisy total; n is private
// under addremove neighbours)", naming the relation as --neighbours
// does, followed by the Note if any.
func (n Normaliser) String() string {
	s := n.Short() + " (public under replace neighbours)"
	if !n.Public {
		s = n.Short() + " (noisy total; n is private under addremove neighbours)"
	}
	if n.Note != "" {
		s += "; " + n.Note
	}
	return s
}

// Short is the short form for titles: "n = 10000" when public, "n ≈
// 9987" for a noisy total.
func (n Normaliser) Short() string {
	if n.Public {
		return fmt.Sprintf("n = %d", n.N)
	}
	return fmt.Sprintf("n ≈ %d", n.N)
}
