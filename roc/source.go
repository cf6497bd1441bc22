package roc

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
)

// Source releases noisy prefix sums of one payload component at sorted
// 1-based bins, in the component's units (counts, or probabilities for
// core.Probability). Values of one component come from one
// release: asking again returns the same noise.
type Source interface {
	Prefixes(c core.Component, bins []int) ([]float64, error)
}

// UStatSource is a Source answering through a UStat: component c is
// taken from the first of Releases that covers it.
type UStatSource struct {
	Ctx      context.Context
	UStat    aggregation.UStat
	Releases []*aggregation.Release
}

// Prefixes implements Source.
func (s UStatSource) Prefixes(c core.Component, bins []int) ([]float64, error) {
	for _, rel := range s.Releases {
		if rel.Mechanism(c) == nil {
			continue
		}
		res, err := s.UStat.Sum(s.Ctx, aggregation.Query{Release: rel, Component: c, Prefixes: bins})
		if err != nil {
			return nil, err
		}
		v := make([]float64, len(bins))
		for j := range v {
			v[j] = res.Value(j)
		}
		return v, nil
	}
	return nil, fmt.Errorf("no release covers payload component %v", c)
}

// RangeVariance returns the noise variance of the range sum prefix(to) −
// prefix(from) of component c, from the release that answers c
// (aggregation.Release.RangeVariance).
func (s UStatSource) RangeVariance(c core.Component, from, to int) (float64, error) {
	for _, rel := range s.Releases {
		if rel.Mechanism(c) != nil {
			return rel.RangeVariance(c, from, to), nil
		}
	}
	return 0, fmt.Errorf("no release covers payload component %v", c)
}

// AllBins returns 1, 2, …, n: every prefix of a grid of n bins.
func AllBins(n int) []int {
	b := make([]int, n)
	for i := range b {
		b[i] = i + 1
	}
	return b
}
