package ecdf

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is one private ECDF release in the form the command line prints
// it. Every field is either public configuration or a post-processing of
// the release, so a Report as a whole has the release's (ε, δ) guarantee
// under the stated neighbouring relation.
type Report struct {
	// Normaliser is n, the normaliser of F̂ (Private.Normaliser): the
	// public number of instances under replace-one, the noisy total under
	// add/remove (JSON keys n, n_public and n_note).
	Normaliser
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Mechanism  string  `json:"mechanism"`
	Neighbours string  `json:"neighbours"`
	Scale      string  `json:"scale"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
	Smoothing  string  `json:"smoothing"`
	// PrefixStdDev is the root mean squared noise of F̂ over the
	// thresholds (Private.MeanStdDev).
	PrefixStdDev float64   `json:"prefix_std_dev"`
	Thresholds   []float64 `json:"thresholds"`
	// ECDF is the raw private F̂(τ_i): normalised by N, not clipped.
	ECDF []float64 `json:"ecdf"`
	// Smoothed is the post-processed curve the quantiles are read from.
	Smoothed []float64 `json:"smoothed"`
	// Quantiles maps each probability p (formatted as the shortest
	// decimal, e.g. "0.25") to its quantile on the smoothed curve.
	Quantiles map[string]float64 `json:"quantiles"`
}

// NewReport gathers a release p over grid g, its curve smoothed by the
// named method, and the quantiles of the smoothed curve at probs
// (Algorithm 1).
func NewReport(p *Private, g *Grid, smoothing string, smoothed []float64, probs []float64) (*Report, error) {
	if g.Len() != p.Bins() || len(smoothed) != p.Bins() {
		return nil, fmt.Errorf("release has %d bins, grid %d, smoothed curve %d", p.Bins(), g.Len(), len(smoothed))
	}
	q, err := Quantiles(CurveAt(smoothed), g, probs)
	if err != nil {
		return nil, err
	}
	m := p.Mechanism()
	r := &Report{
		Normaliser:   p.Normaliser(),
		Epsilon:      m.Epsilon(),
		Delta:        m.Delta(),
		Mechanism:    m.Name(),
		Neighbours:   m.Relation().String(),
		Scale:        g.Scale().String(),
		Min:          g.Min(),
		Max:          g.Max(),
		Smoothing:    smoothing,
		PrefixStdDev: p.MeanStdDev(),
		Thresholds:   g.Thresholds(),
		ECDF:         p.Curve(),
		Smoothed:     smoothed,
		Quantiles:    make(map[string]float64, len(probs)),
	}
	for j, prob := range probs {
		r.Quantiles[formatProbability(prob)] = q[j]
	}
	return r, nil
}

func formatProbability(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }

// summaryRows is the number of thresholds WriteText shows.
const summaryRows = 10

// WriteText writes a readable summary: the privacy guarantee, the noise
// level, F̂ at about ten evenly spaced thresholds, and the quantiles in
// increasing order of probability.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	n := len(r.Thresholds)
	fmt.Fprintf(&b, "private ECDF, %s", r.Normaliser)
	fmt.Fprintf(&b, "\nprivacy: ε = %g, δ = %g, %s neighbours, mechanism %s\n", r.Epsilon, r.Delta, r.Neighbours, r.Mechanism)
	fmt.Fprintf(&b, "grid: %d %s bins over [%g, %g]\n", n, r.Scale, r.Min, r.Max)
	fmt.Fprintf(&b, "noise: expected std dev of F̂ per threshold %.3g (%.3g instances)\n", r.PrefixStdDev, r.PrefixStdDev*float64(r.N))
	fmt.Fprintf(&b, "smoothing: %s\n\n", r.Smoothing)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "threshold\tprivate\tsmoothed\t")
	for _, i := range evenlySpaced(n, summaryRows) {
		fmt.Fprintf(tw, "%.6g\t%.4f\t%.4f\t\n", r.Thresholds[i-1], r.ECDF[i-1], r.Smoothed[i-1])
	}
	tw.Flush()
	if len(r.Quantiles) > 0 {
		b.WriteString("\nquantiles (of the smoothed curve, to one bin):\n")
		keys := slices.SortedFunc(maps.Keys(r.Quantiles), func(a, b string) int {
			pa, _ := strconv.ParseFloat(a, 64)
			pb, _ := strconv.ParseFloat(b, 64)
			return cmp.Compare(pa, pb)
		})
		for _, key := range keys {
			fmt.Fprintf(&b, "  p = %-6s %.6g\n", key, r.Quantiles[key])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// evenlySpaced returns up to k bin indices in [1, n], evenly spaced and
// ending at n.
func evenlySpaced(n, k int) []int {
	var idx []int
	for j := 1; j <= k; j++ {
		i := (j*n + k - 1) / k
		if len(idx) == 0 || idx[len(idx)-1] != i {
			idx = append(idx, i)
		}
	}
	return idx
}
