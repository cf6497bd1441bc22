package fss

import (
	"fmt"
	"io"
	"math/bits"
	"runtime"
)

// PrefixDomain maps the prefix sums of an ECDF over a fixed number of bins
// onto the strict comparison x < α that a key computes.
//
// A party whose record falls in 0-based bin b contributes β·1[b ≤ j] to
// the prefix sum that ends with bin j (the 1-based prefix i = j + 1 of the
// noise mechanisms). With N bins and n = bits.Len(N) (so N < 2^n), the
// party generates keys for α = N − b and the servers evaluate prefix j at
// x = N − 1 − j: x < α ⟺ N − 1 − j < N − b ⟺ b ≤ j. Both α ∈ [1, N] and
// x ∈ [0, N − 1] lie in [0, 2^n) for every bin and prefix, and
// increasing prefixes map to decreasing points (SumPrefixes handles the
// order).
type PrefixDomain struct {
	bins  uint64
	nbits int
}

// NewPrefixDomain returns the mapping for an ECDF over bins ≥ 1 bins.
func NewPrefixDomain(bins int) (PrefixDomain, error) {
	if bins < 1 || bits.Len(uint(bins)) > maxBits {
		return PrefixDomain{}, fmt.Errorf("fss: prefix domain of %d bins, want at least 1", bins)
	}
	return PrefixDomain{bins: uint64(bins), nbits: bits.Len(uint(bins))}, nil
}

// Bits returns the key domain size n = bits.Len(N), so that N < 2^n.
func (p PrefixDomain) Bits() int { return p.nbits }

// alpha returns the α = N − b for which a party in 0-based bin b generates
// its keys.
func (p PrefixDomain) alpha(bin int) (uint64, error) {
	if bin < 0 || uint64(bin) >= p.bins {
		return 0, fmt.Errorf("bin %d outside [0, %d): %w", bin, p.bins, ErrOutOfDomain)
	}
	return p.bins - uint64(bin), nil
}

// point returns the input x = N − 1 − j at which the servers evaluate the
// prefix ending with 0-based bin j: Eval(k0, x) + Eval(k1, x) = β·1[b ≤ j].
func (p PrefixDomain) point(prefix int) (uint64, error) {
	if prefix < 0 || uint64(prefix) >= p.bins {
		return 0, fmt.Errorf("prefix %d outside [0, %d): %w", prefix, p.bins, ErrOutOfDomain)
	}
	return p.bins - 1 - uint64(prefix), nil
}

// Gen returns the two keys of a party in 0-based bin b with payload β:
// Gen(Alpha(b), β, Bits(), rand).
func (p PrefixDomain) Gen(bin int, beta []uint64, rand io.Reader) (k0, k1 *Key, err error) {
	alpha, err := p.alpha(bin)
	if err != nil {
		return nil, nil, fmt.Errorf("fss: %w", err)
	}
	return Gen(alpha, beta, p.nbits, rand)
}

// SumPrefixes adds to acc one server's share of the prefix sums: for each
// r, acc[r·m + c] += Σ_k Eval(k, Point(prefixes[r]))[c], which the two
// servers' shares complete to Σ_parties β_c·1[b ≤ prefixes[r]]. Prefixes
// are 0-based bin indices, strictly increasing; keys must have n = Bits().
// It is SumBatch on the mirrored points.
func (p PrefixDomain) SumPrefixes(keys []*Key, prefixes []int, acc []uint64) error {
	points := make([]uint64, len(prefixes))
	for r, j := range prefixes {
		x, err := p.point(j)
		if err != nil {
			return fmt.Errorf("fss: SumPrefixes: prefix %d: %w", r, err)
		}
		if r > 0 && j <= prefixes[r-1] {
			return fmt.Errorf("fss: SumPrefixes: prefixes not strictly increasing: prefix %d = %d follows %d", r, j, prefixes[r-1])
		}
		points[len(points)-1-r] = x
	}
	for i, k := range keys {
		if k != nil && k.nbits != p.nbits {
			return fmt.Errorf("fss: SumPrefixes: key %d has n = %d, the domain of %d bins has n = %d", i, k.nbits, p.bins, p.nbits)
		}
	}
	_, err := sumBatch(keys, points, acc, true, runtime.GOMAXPROCS(0))
	return err
}
