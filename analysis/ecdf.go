package analysis

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

// ECDF is a private ECDF from one release of the Count component (JSON
// schema in docs/json.md). Every field is public configuration or
// post-processing of the release.
type ECDF struct {
	Privacy
	Scale string  `json:"scale"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Bins  int     `json:"bins"`
	// Prefixes are the bins read, in [1, Bins], the last Bins;
	// Thresholds their thresholds τ_i.
	Prefixes   []int     `json:"prefixes"`
	Thresholds []float64 `json:"thresholds"`
	// Counts are the released prefix counts ĉ_i; Raw is F̂ = Counts / n
	// (not clipped).
	Counts []int64   `json:"counts"`
	Raw    []float64 `json:"ecdf"`
	// StdDev is the root mean noise s.d. of F̂ over Prefixes, every
	// server's noise included.
	StdDev float64 `json:"stddev"`
	// Smoothed is Raw post-processed by Smoothing (Smooth), and
	// Quantiles maps each probability p (the shortest decimal, e.g.
	// "0.25") to its quantile on the smoothed curve.
	Smoothing string             `json:"smoothing"`
	Smoothed  []float64          `json:"smoothed"`
	Quantiles map[string]float64 `json:"quantiles"`
	// Band95 is the simultaneous 95 % confidence band of the true ECDF
	// at Thresholds given the noise (newBand), nil when built with no
	// interval draws; QuantilesCI95 maps each key of Quantiles to its 95 %
	// interval of the data's p-quantile, read off the band and widened
	// to whole bins (quantileInterval; empty without a band).
	Band95        *Band                 `json:"band95,omitempty"`
	QuantilesCI95 map[string][2]float64 `json:"quantiles_ci95"`

	mech mechanism.Mechanism // noise pattern of the Count component
	grid *ecdf.Grid
}

// NewECDF builds the ECDF result from res, the released Count prefixes of
// one release over grid g, the last of which is N, normalised as the
// analyst can (ecdf.NewNormaliser), and smooths it by DefaultSmoothing
// with no quantiles (Smooth changes both). Its band and quantile
// intervals come from draws Monte-Carlo draws of the noise law
// (DefaultIntervalDraws; 0: no intervals).
func NewECDF(res *aggregation.Result, g *ecdf.Grid, draws int) (*ECDF, error) {
	rel := res.Release
	if res.Component != core.Count || g.Len() != rel.Spec.Mechanism.Bins {
		return nil, fmt.Errorf("analysis: an ECDF needs the Count sums of a release over the grid's %d bins", g.Len())
	}
	n, err := rel.Normaliser(lastSum(res))
	if err != nil {
		return nil, fmt.Errorf("analysis: release %v: %w", rel.ID, err)
	}
	e := &ECDF{
		Privacy: describe(rel, core.Count, n), Scale: g.Scale().String(), Min: g.Min(), Max: g.Max(), Bins: g.Len(),
		Prefixes: res.Prefixes, Counts: res.Sums, mech: rel.Mechanism(core.Count), grid: g,
	}
	var sumVar float64
	for j, i := range res.Prefixes {
		e.Thresholds = append(e.Thresholds, g.Threshold(i))
		e.Raw = append(e.Raw, float64(res.Sums[j])/float64(n.N))
		sumVar += res.Variance(j)
	}
	e.StdDev = math.Sqrt(sumVar/float64(len(res.Prefixes))) / float64(n.N)
	if draws > 0 {
		e.Band95 = newBand(res, e, draws)
	}
	return e, e.Smooth(DefaultSmoothing, nil)
}

// QueryECDF reads the Count prefixes of release rel at prefixes
// (AllPrefixes for the whole curve) through u and returns NewECDF of
// them with draws interval draws. Reading a release again costs no
// budget.
func QueryECDF(ctx context.Context, u aggregation.UStat, rel *aggregation.Release, g *ecdf.Grid, prefixes []int, draws int) (*ECDF, error) {
	res, err := u.Sum(ctx, aggregation.Query{Release: rel, Component: core.Count, Prefixes: prefixes})
	if err != nil {
		return nil, err
	}
	return NewECDF(res, g, draws)
}

// Smooth post-processes the private curve Raw with method (CheckSmoothing;
// dp-ecdf Eq. 3) — with the curve's last point fixed at 1 when n is public
// (replace-one) and the grid's top is read (smooth.ApplyTop) — and reads the p-quantiles of the smoothed curve by
// Algorithm 1 over the read prefixes (to one bin when all are read).
// Post-processing: no budget, same guarantee.
func (e *ECDF) Smooth(method string, probs []float64) error {
	method, err := CheckSmoothing(method, len(e.Prefixes), e.Bins)
	if err != nil {
		return err
	}
	apply := smooth.Apply
	if e.Public && len(e.Prefixes) > 0 && e.Prefixes[len(e.Prefixes)-1] == e.Bins {
		// Under replace-one n is public, so is F = 1 at the grid's top.
		apply = smooth.ApplyTop
	}
	g, err := apply(method, e.Raw, e.mech)
	if err != nil {
		return fmt.Errorf("analysis: smoothing the ECDF: %w", err)
	}
	q := make(map[string]float64, len(probs))
	ci := make(map[string][2]float64, len(probs))
	for _, p := range probs {
		j, err := ecdf.QuantileIndex(ecdf.CurveAt(g), len(g), p)
		if err != nil {
			return fmt.Errorf("analysis: %w", err)
		}
		key := strconv.FormatFloat(p, 'g', -1, 64)
		q[key] = e.Thresholds[j-1]
		if e.Band95 != nil {
			ci[key] = quantileInterval(e.Band95, e.Thresholds, e.grid.Min(), p)
		}
	}
	e.Smoothing, e.Smoothed, e.Quantiles, e.QuantilesCI95 = method, g, q, ci
	return nil
}

// Noise returns the mechanism whose noise the counts carry.
func (e *ECDF) Noise() mechanism.Mechanism { return e.mech }

// Grid returns the grid of the ECDF: its scale, ends and size.
func (e *ECDF) Grid() *ecdf.Grid { return e.grid }
