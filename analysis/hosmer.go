package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
)

// HosmerGroups is the default Q, the number of Hosmer–Lemeshow groups
// (dp-ecdf §6.6).
const HosmerGroups = 10

// hosmerMinExpected clips every released expected count of a group to at
// least one instance (hosmer.Config.MinExpected): post-processing that
// keeps H finite when noise drives a small E_1 or E_0 to 0 or below.
const hosmerMinExpected = 1

// HosmerPlans are the plan names HosmerPlan knows, the default first:
// hosmer.GridPlan (one release of {Label, NotLabel}, a ROC release; E_1
// from the counts and the bins' centre probabilities), hosmer.JointPlan
// (one release of {Label, NotLabel, Probability}) and hosmer.PaperPlan
// (dp-ecdf Algorithm 2's own split).
var HosmerPlans = []string{"grid", "joint", "paper"}

// HosmerPlan builds the plan called name (HosmerPlans; "" is the grid
// plan) spending epsilon over a grid of bins bins, with the mechanism
// name, k and δ of template.
func HosmerPlan(name string, epsilon float64, bins int, template mechanism.Params) (*hosmer.Plan, error) {
	switch name {
	case "", "grid":
		return hosmer.GridPlan(epsilon, bins, template)
	case "joint":
		p, err := hosmer.JointPlan(epsilon, bins, template)
		if err != nil && template.Delta != 0 {
			return nil, fmt.Errorf("%w; the %s mechanism has δ = %g: use the grid or paper plan", err, template.Name, template.Delta)
		}
		return p, err
	case "paper":
		return hosmer.PaperPlan(epsilon, bins, template)
	}
	return nil, fmt.Errorf("analysis: Hosmer–Lemeshow plan %q is unknown (valid: %s)", name, strings.Join(HosmerPlans, ", "))
}

// HosmerConfig is the configuration of Algorithm 2 every command runs:
// groups groups (0: HosmerGroups) over bins bins of reports reports, with
// expected counts clipped to at least one instance.
func HosmerConfig(bins, reports, groups int) hosmer.Config {
	if groups == 0 {
		groups = HosmerGroups
	}
	return hosmer.Config{Bins: bins, Reports: reports, Groups: groups, MinExpected: hosmerMinExpected}
}

// Hosmer is a private Hosmer–Lemeshow test (dp-ecdf Eq. 5, Algorithm 2)
// from the releases of one plan (JSON schema in docs/json.md). Every
// field is public configuration or post-processing of the releases.
type Hosmer struct {
	Plan      string  `json:"plan"`
	Epsilon   float64 `json:"epsilon"`
	Delta     float64 `json:"delta"`
	Guarantee string  `json:"guarantee"`
	// ReleaseSpecs say what each release of the plan holds and its own
	// guarantee (Guarantee).
	ReleaseSpecs []string `json:"release_specs"`
	// Groups has at most Q groups (quantiles falling in one bin are
	// merged, hosmer.Boundaries), with their released size, observed and
	// expected positives after clipping.
	Groups []hosmer.Group `json:"groups"`
	// Statistic is H and PValueNaive P(χ²_{G−2} ≥ H), which ignores the
	// noise (and, for a model not fitted on these data, is too small even
	// without it); PValueNaive is null with fewer than 3 groups, and all
	// three are null when Error is set.
	Statistic   *float64 `json:"statistic"`
	PValueNaive *float64 `json:"p_value_naive"`
	// PValuePrivate is the noise-aware p-value (hosmer.Plan.NullTest: a
	// parametric bootstrap of H under H₀ over the public noise law, B =
	// BootstrapDraws), PValueSE its Monte-Carlo standard error
	// √(p(1−p)/B); null when not computed (B = 0) or H is undefined.
	PValuePrivate  *float64 `json:"p_value_private"`
	PValueSE       *float64 `json:"p_value_private_se"`
	BootstrapDraws int      `json:"bootstrap_draws"`
	// ObservedSD is, for each group, the standard deviation of its
	// released O_1 about E_1 if the model is calibrated (observedSD):
	// the release's noise (the range variance of the Label sums over
	// the group's bins, every server's draw) plus binomial sampling,
	// size·m(1−m) with m = E_1/size. Calibration charts draw O_1/size ±
	// 1.96·ObservedSD/size (RateHalfWidths). Empty when H is undefined.
	ObservedSD []float64 `json:"observed_sd,omitempty"`
	// Power is what the noise-aware test could detect at this n, ε and
	// noise (hosmerPower); absent when H is undefined or there are fewer
	// than 3 groups.
	Power *HosmerPower `json:"power,omitempty"`
	// Error says why the noise left H undefined (a released group too
	// small to have positive expected positives and negatives); the
	// releases are spent all the same.
	Error string `json:"error,omitempty"`
	// H is the statistic as a number: NaN when Error is set, and not
	// necessarily finite.
	H float64 `json:"-"`
}

// Bootstrap configures the noise-aware p-value of RunHosmer
// (hosmer.Plan.NullTest): Draws simulated null data sets (0: none),
// their noise seeded by Seed. It is post-processing: no ε.
type Bootstrap struct {
	Draws int
	Seed  uint64
}

// NewBootstrap returns the Bootstrap of draws draws (0:
// hosmer.DefaultNullDraws; negative: none) seeded by seed.
func NewBootstrap(draws int, seed uint64) Bootstrap {
	switch {
	case draws == 0:
		draws = hosmer.DefaultNullDraws
	case draws < 0:
		draws = 0
	}
	return Bootstrap{Draws: draws, Seed: seed}
}

// RunHosmer runs Algorithm 2 of plan on its releases rels through u
// (hosmer.Plan.Evaluate), the released ECDF smoothed by method, with cfg
// (HosmerConfig), and its noise-aware p-value by boot. When the noise
// leaves H undefined (hosmer.ErrUndefined) the result says so in Error,
// and the error is nil.
func RunHosmer(ctx context.Context, u aggregation.UStat, plan *hosmer.Plan, rels []*aggregation.Release, g *ecdf.Grid, method string, cfg hosmer.Config, boot Bootstrap) (*Hosmer, error) {
	h := &Hosmer{Plan: plan.Name, Epsilon: plan.Epsilon, ReleaseSpecs: DescribeReleases(plan, rels), H: math.NaN()}
	for _, rel := range rels {
		h.Delta += rel.Delta()
	}
	h.Guarantee = guarantee(h.Epsilon, h.Delta, mechanism.ReplaceOne,
		fmt.Sprintf("n public; proved for all %d release(s) of the %s plan together, which is what each ledger charged", len(rels), plan.Name), rels[0].Servers)
	res, err := plan.Evaluate(ctx, u, rels, g, method, cfg)
	switch {
	case errors.Is(err, hosmer.ErrUndefined):
		h.Error = err.Error()
		return h, nil
	case err != nil:
		return nil, err
	}
	h.Statistic, h.PValueNaive = res.Finite()
	h.Groups, h.H = res.Groups, res.H
	h.ObservedSD = observedSD(rels, res.Groups)
	h.Power = hosmerPower(res.Groups, h.ObservedSD)
	if boot.Draws > 0 && len(res.Groups) >= 3 {
		t, err := plan.NullTest(rels, g, method, cfg, res, boot.Draws, boot.Seed)
		if err != nil {
			return nil, err
		}
		h.PValuePrivate, h.PValueSE, h.BootstrapDraws = &t.PValue, &t.StdErr, t.Draws
	}
	return h, nil
}

// observedSD returns Hosmer.ObservedSD of groups released by rels. The
// noise term is that of the raw Label range sum; smoothing (on the grid
// plan) and clipping only shrink it, so the bar is conservative there.
func observedSD(rels []*aggregation.Release, groups []hosmer.Group) []float64 {
	var rel *aggregation.Release
	for _, r := range rels {
		if r.Mechanism(core.Label) != nil {
			rel = r
			break
		}
	}
	sd := make([]float64, len(groups))
	for k, g := range groups {
		var v float64
		if rel != nil {
			v = rel.RangeVariance(core.Label, g.First-1, g.Last)
		}
		if g.Size > 0 {
			m := min(max(g.Expected/g.Size, 0), 1)
			v += g.Size * m * (1 - m)
		}
		sd[k] = math.Sqrt(v)
	}
	return sd
}

// RateHalfWidths returns, for each group of h, the half-width
// 1.96·ObservedSD/size of the 95 % error bar of its observed rate
// O_1/size (noise plus binomial sampling under calibration), 0 for a
// group of less than one instance; nil without ObservedSD.
func (h *Hosmer) RateHalfWidths() []float64 {
	if len(h.ObservedSD) != len(h.Groups) {
		return nil
	}
	w := make([]float64, len(h.Groups))
	for k, g := range h.Groups {
		if g.Size >= 1 {
			w[k] = z975 * h.ObservedSD[k] / g.Size
		}
	}
	return w
}

// WriteGroups prints h's groups as a table for text output: each
// group's bins, released size, observed (O_1) and expected (E_1)
// positives, the s.d. of O_1 about E_1 under calibration (ObservedSD:
// DP noise + binomial sampling), and the observed rate with its 95 %
// interval (RateHalfWidths) next to the expected rate, as the
// calibration chart draws them: a rate, and its interval, clipped to
// [0, 1], where the true rate lies (a noisy O_1 can leave it).
func (h *Hosmer) WriteGroups(w io.Writer) error {
	half := h.RateHalfWidths()
	fmt.Fprintf(w, "%5s  %9s  %9s  %9s  %9s  %9s  %9s  %26s\n", "group", "bins", "size", "observed", "expected", "obs. s.d.", "exp. rate", "obs. rate [95 % interval]")
	clip := func(x float64) float64 { return min(max(x, 0), 1) }
	for k, g := range h.Groups {
		sd, rate := "—", "—"
		if half != nil {
			sd = fmt.Sprintf("%.1f", h.ObservedSD[k])
		}
		exp, obs, ok := g.Rates()
		expText := "—"
		if ok {
			expText = fmt.Sprintf("%.4f", exp)
			rate = fmt.Sprintf("%.4f", clip(obs))
			if half != nil {
				rate += fmt.Sprintf(" [%.4f, %.4f]", clip(obs-half[k]), clip(obs+half[k]))
			}
		}
		if _, err := fmt.Fprintf(w, "%5d  %9s  %9.1f  %9.1f  %9.1f  %9s  %9s  %26s\n", k+1, fmt.Sprintf("%d-%d", g.First, g.Last), g.Size, g.Positives, g.Expected, sd, expText, rate); err != nil {
			return err
		}
	}
	return nil
}

// CalibrationBarsLegend names the error bars of RateHalfWidths in a
// chart's legend.
const CalibrationBarsLegend = "95 % bars: DP noise + binomial sampling"

// DescribeReleases says what each release of plan in rels (all, or
// those created before an error) holds and its guarantee.
func DescribeReleases(plan *hosmer.Plan, rels []*aggregation.Release) []string {
	var d []string
	for k, rel := range rels {
		spec := plan.Releases[k]
		d = append(d, fmt.Sprintf("%v at ε=%.4g per privacy unit: %s", spec.Components, spec.Mechanism.Epsilon, Guarantee(rel)))
	}
	return d
}

// TrueHosmer is the textbook test on the grid of nBins bins: groups
// (0: HosmerGroups) at the exact quantiles of the instances' 1-based
// bins, with their 0/1 labels and predicted probabilities.
func TrueHosmer(bins, labels []int, probs []float64, nBins, groups int) (*hosmer.Result, error) {
	groups = HosmerConfig(nBins, len(bins), groups).Groups
	hist, err := ecdf.Histogram(bins, nBins)
	if err != nil {
		return nil, err
	}
	bounds, err := hosmer.Boundaries(ecdf.ECDF(hist), groups)
	if err != nil {
		return nil, err
	}
	gs, err := hosmer.Exact(bins, labels, probs, bounds)
	if err != nil {
		return nil, err
	}
	h, err := hosmer.Statistic(gs)
	if err != nil {
		return nil, fmt.Errorf("analysis: exact Hosmer–Lemeshow statistic: %w", err)
	}
	res := &hosmer.Result{Boundaries: bounds, Groups: gs, H: h, PValue: math.NaN()}
	if len(gs) >= 3 {
		res.PValue, _ = hosmer.PValue(h, len(gs))
	}
	return res, nil
}

// DescribePValues says, for text output, the noise-aware p-value of h
// with its Monte-Carlo standard error and B, then the naive χ² one,
// labelled as such.
func DescribePValues(h *Hosmer) string {
	if h.PValueNaive == nil {
		return "p-value undefined (fewer than 3 groups)"
	}
	naive := fmt.Sprintf("naive χ²_%d p-value %.4g (ignores the noise: not a valid test)", len(h.Groups)-2, *h.PValueNaive)
	if h.PValuePrivate == nil {
		return "no noise-aware p-value (bootstrap off); " + naive
	}
	s := fmt.Sprintf("noise-aware p-value %.4g ± %.2g (Monte-Carlo s.e., B = %d null data sets simulated over the public noise law); %s",
		*h.PValuePrivate, *h.PValueSE, h.BootstrapDraws, naive)
	if h.Power != nil {
		s += "; " + h.Power.Describe()
	}
	return s
}

// ShortPValues is DescribePValues for a chart title.
func ShortPValues(h *Hosmer) string {
	switch {
	case h.PValueNaive == nil:
		return "p undefined"
	case h.PValuePrivate == nil:
		return fmt.Sprintf("naive χ² p %.3g", *h.PValueNaive)
	}
	return fmt.Sprintf("noise-aware p %.3g ± %.2g (B %d), naive χ² p %.3g", *h.PValuePrivate, *h.PValueSE, h.BootstrapDraws, *h.PValueNaive)
}
