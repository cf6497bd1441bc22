package server

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// dcfBits is the key input length n for a dataset of bins bins.
func dcfBits(bins int) int {
	d, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return 0
	}
	return d.Bits()
}

// dcfSums returns this server's share of Σ_keys payload_c·1[bin ≤ i] for
// every (1-based, increasing) prefix i: one batched walk of every key's
// tree over the points of all prefixes (fss.PrefixDomain.SumPrefixes).
func dcfSums(keys []*fss.Key, c payload.Component, prefixes []int, bins int) ([]uint64, error) {
	dom, err := fss.NewPrefixDomain(bins)
	if err != nil {
		return nil, err
	}
	zeroBased := make([]int, len(prefixes))
	for j, i := range prefixes {
		zeroBased[j] = i - 1
	}
	acc := make([]uint64, len(prefixes)*payload.NumComponents)
	if err := dom.SumPrefixes(keys, zeroBased, acc); err != nil {
		return nil, fmt.Errorf("evaluating %d DCF keys: %w", len(keys), err)
	}
	sums := make([]uint64, len(prefixes))
	for j := range sums {
		sums[j] = acc[j*payload.NumComponents+int(c)]
	}
	return sums, nil
}
