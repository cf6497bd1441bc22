package vdcf

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Aggregate is one server's sum of accepted reports' prefix vectors
// (Server.PrepareAll) over some of their components: its share of each
// component's prefix sums. Sums are carried as 64-bit words congruent
// mod p (fss.AddLazy), one addition and a conditional one per element,
// and made canonical when read; eight per instruction on AVX-512
// (addLazyAccel).
type Aggregate struct {
	bins int      // prefixes
	sum  []uint64 // component k's prefix j at k·bins + j
}

// Summed is the components a server sums over its accepted reports
// (NewAggregate's comp): the count and label, and the probability if the
// scheme's reports carry it.
func (s *Scheme) Summed() []payload.Component { return slices.Clone(s.summed()) }

// The components summed (Scheme.summed), shared: never written.
var (
	summedCount = []payload.Component{payload.Count, payload.Label}
	summedProb  = []payload.Component{payload.Count, payload.Label, Probability}
)

// summed is Summed without a copy, for the walk's per-run work.
func (s *Scheme) summed() []payload.Component {
	if s.prob {
		return summedProb
	}
	return summedCount
}

// NewAggregate returns the empty aggregate of the scheme's prefix
// vectors over the components comp, each one the scheme's reports carry.
func (s *Scheme) NewAggregate(comp []payload.Component) (*Aggregate, error) {
	for _, c := range comp {
		if int(c) >= s.Components() || c == payload.Probability && !s.prob { // component 3 is then the second MAC
			return nil, fmt.Errorf("vdcf: component %v is not carried by this scheme's reports (%d components)", c, s.Components())
		}
	}
	return &Aggregate{bins: s.bins, sum: make([]uint64, len(comp)*s.bins)}, nil
}

// AddSummed adds a vector of the aggregate's components laid out as its
// sums, component by component (the order of NewAggregate's comp):
// component k's prefix j at k·bins + j, as Prepared.Summed is for an
// aggregate over Scheme.Summed. One of another length is an error and
// changes nothing.
func (a *Aggregate) AddSummed(vec []fss.Fp) error {
	if len(vec) != len(a.sum) {
		return fmt.Errorf("vdcf: summed vector of %d elements, want %d components × %d bins", len(vec), len(a.sum)/a.bins, a.bins)
	}
	done := addLazyAccel(a.sum, vec)
	for i := done; i < len(vec); i++ {
		a.sum[i] = fss.AddLazy(a.sum[i], vec[i])
	}
	return nil
}

// Sum is the sum at prefix j of the k-th component summed (the order of
// NewAggregate's comp).
func (a *Aggregate) Sum(k, j int) fss.Fp { return fss.Canonical(a.sum[k*a.bins+j]) }

// Encode returns the sums as canonical field elements, 8 bytes each,
// little-endian, component by component (the order of NewAggregate's
// comp): what AddEncoded adds to another aggregate of the same
// components.
func (a *Aggregate) Encode() []byte {
	out := make([]byte, 0, 8*len(a.sum))
	for _, w := range a.sum {
		out = binary.LittleEndian.AppendUint64(out, uint64(fss.Canonical(w)))
	}
	return out
}

// AddEncoded adds an encoded aggregate (Encode) of the same components
// and bins; one of another length, or with an element not below the
// modulus, is an error and changes nothing.
func (a *Aggregate) AddEncoded(b []byte) error {
	xs := make([]fss.Fp, len(a.sum))
	if err := readElements(b, xs); err != nil {
		return fmt.Errorf("vdcf: encoded aggregate of %d components × %d bins: %w", len(a.sum)/a.bins, a.bins, err)
	}
	return a.AddSummed(xs)
}
