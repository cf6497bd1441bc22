package simulate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// WriteText prints a readable summary: the setting and its privacy, the
// error of the private ECDF, the cost, and the curves at up to 11
// thresholds.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("data\t%s\n", r.Data.Source)
	if m := r.Data.Model; m != nil {
		p("model\tlogistic regression on %d rows, %d features; test accuracy %.3f, AUC %.3f on %d rows\n", m.TrainRows, m.Features, m.Accuracy, m.AUC, m.TestRows)
	}
	p("parties\t%d; the analyst normalises by %s\n", r.Parties, r.Normaliser)
	switch {
	case r.Verified:
		p("backend\t%s, every report verified by both servers\n", r.Backend)
	case r.Backend == "dcf":
		p("backend\t%s, unverified: reports counted unchecked\n", r.Backend)
	default:
		p("backend\t%s\n", r.Backend)
	}
	if r.Rejected != nil {
		p("rejected\t%s\n", verify.RejectedText(r.Rejected))
	}
	p("mechanism\t%s over %d bins, %d thresholds queried\n", r.Mechanism, r.Bins, len(r.ROC.FPR)-1)
	p("privacy\t%s\n", r.Guarantee)
	p("ε split\tECDF of scores %.6g; ROC/PR %.6g (positives and negatives vectors in one release: a record is in exactly one of them, so the pair costs ε once; PR is post-processing); Hosmer–Lemeshow %.6g\n", r.Budget.ECDF, r.Budget.ROC, r.Budget.Hosmer)
	for _, g := range r.Budget.Guarantees {
		p("\t%s\n", g)
	}
	if r.ECDF != nil {
		p("error\tmax |F̂−F| %.4f, RMSE %.4f (expected s.d. %.4f); smoothed: max %.4f, RMSE %.4f (%s)\n",
			r.Error.MaxAbs, r.Error.RMSE, r.ECDF.StdDev, r.Error.SmoothedMaxAbs, r.Error.SmoothedRMSE, analysis.Describe(r.ECDF.Smoothing))
	}
	if r.ECDF != nil && r.ECDF.Band95 != nil {
		b := r.ECDF.Band95
		p("ECDF band\tsimultaneous 95 %% band F̂ ± %.3g s.d. (Monte Carlo over the noise law, %d draws); holds the true F at every threshold: %s\n",
			b.Critical, b.Draws, yesNo(r.bandCovers()))
	}
	p("ROC\tAUC true %.4f (unbinned %.4f), private raw %s, smoothed %.4f, interpolated %.4f; area between true and %s curves %.4f, between the unbinned and the interpolated %.4f\n",
		r.True.ROC.AUC, r.True.AUCUnbinned, rawAUCText(r.ROC.Raw.AUC), r.ROC.AUC, r.ROC.Interpolated.AUC, r.privateCurve(), r.Error.ROCArea, r.Error.ROCAreaUnbinned)
	if iv, pop := r.ROC.AUCCI95, r.ROC.AUCCI95Population; iv != nil {
		p("\tAUC 95 %% CI [%.4f, %.4f] for this data set's binned AUC given the DP noise (holds the true %.4f: %s); [%.4f, %.4f] for the population AUC (+ sampling)\n",
			iv[0], iv[1], r.True.ROC.AUC, yesNo(iv[0] <= r.True.ROC.AUC && r.True.ROC.AUC <= iv[1]), pop[0], pop[1])
	}
	if iv := r.ROC.AveragePrecisionCI95; iv != nil {
		ap := r.True.ROC.AveragePrecision
		p("\taverage precision true %.4f, smoothed %.4f, 95 %% CI [%.4f, %.4f] for this data set's binned average precision given the DP noise (holds the true: %s)\n",
			ap, r.ROC.AveragePrecision, iv[0], iv[1], yesNo(iv[0] <= ap && ap <= iv[1]))
	}
	for _, x := range analysis.BandFPRs {
		if fpr, lo, hi, ok := r.ROC.Band95.At(x); ok {
			t := r.True.ROC.TPRAt(fpr)
			p("	TPR at FPR %.2f: true %.4f, %s %.4f, simultaneous 95 %% band [%.4f, %.4f] (holds the true: %s)\n", fpr, t, r.privateCurve(), r.ROC.TPRAt(fpr), lo, hi, yesNo(lo <= t && t <= hi))
		}
	}
	if h := r.Hosmer; h != nil && h.Undefined != "" {
		p("Hosmer–Lemeshow\tQ = %d: undefined: %s\n", h.Groups, h.Undefined)
	} else if h != nil {
		p("Hosmer–Lemeshow\tQ = %d: true H %.3f (p %s)\n", h.Groups, *h.StatisticTrue, pValue(h.PValueTrue))
		for _, a := range h.Allocations {
			if a.Error != "" {
				p("\t%s: private H undefined: %s\n", a.describe(), a.Error)
				continue
			}
			p("\t%s: private H %.3f, %s\n", a.describe(), *a.Statistic, analysis.DescribePValues(&a.Hosmer))
			tw.Flush()
			a.WriteGroups(w)
		}
	}
	for _, n := range r.Notes {
		p("note\t%s\n", n)
	}
	p("bytes\tper party %.0f; leader %d, helper %d; total %d; verification exchange %d\n", r.Cost.BytesPerParty, r.Cost.BytesPerServer["leader"], r.Cost.BytesPerServer["helper"], r.Cost.BytesTotal, r.Cost.VerifyBytes)
	p("round trips\tper party %.0f; analyst %d; leader→helper %d\n", r.Cost.Rounds.PerParty, r.Cost.Rounds.Analyst, r.Cost.Rounds.Servers)
	p("seconds\tdata %.3f, setup %.3f, upload %.3f, release %.3f, query %.3f\n",
		r.Cost.Seconds["data"], r.Cost.Seconds["setup"], r.Cost.Seconds["upload"], r.Cost.Seconds["release"], r.Cost.Seconds["query"])
	if b := r.Cost.AESBound; b != nil {
		p("CPU\tupload + release + query %.3f s = %.2f× the AES bound %.3f s (2 servers × %d keys × %d blocks at %.3f ns); all phases: %s\n",
			b.CPUSeconds, b.ProcessRatio, b.Seconds, r.Parties, b.BlocksPerKey, b.NsPerBlock, phaseSeconds(r.Cost.CPUSeconds))
		if r.Cost.ServersCPUSeconds != nil {
			p("servers' CPU\tkey walks %.3f s = %.2f× the AES bound; the rest (parties, transport, decoding) %.3f s\n",
				b.ServersCPUSeconds, b.Ratio, b.OtherCPUSeconds)
		}
	} else {
		p("CPU\tall phases: %s\n", phaseSeconds(r.Cost.CPUSeconds))
		if s := r.Cost.ServersCPUSeconds; s != nil {
			p("servers' CPU\tverified key walks and sketches: %s\n", phaseSeconds(s))
		}
	}
	if r.ECDF == nil {
		return tw.Flush()
	}
	p("\n threshold\ttrue F\tprivate F̂\tsmoothed\t95 %% band\n")
	for _, j := range sample(len(r.ECDF.Prefixes), 11) {
		band := "—"
		if b := r.ECDF.Band95; b != nil {
			band = fmt.Sprintf("[%.4f, %.4f]", b.Lower[j], b.Upper[j])
		}
		p(" %.4g\t%.4f\t%.4f\t%.4f\t%s\n", r.ECDF.Thresholds[j], r.True.ECDF[j], r.ECDF.Raw[j], r.ECDF.Smoothed[j], band)
	}
	return tw.Flush()
}

// rawAUCText is the raw private AUC, flagged when outside [0, 1] (the
// notes say why).
func rawAUCText(a float64) string {
	if a >= 0 && a <= 1 {
		return fmt.Sprintf("%.4f", a)
	}
	return fmt.Sprintf("%.4g (outside [0, 1]: noise larger than the class counts, see the notes)", a)
}

// bandCovers reports whether the ECDF's 95 % band holds the true F at
// every threshold read.
func (r *Report) bandCovers() bool {
	b := r.ECDF.Band95
	for j, f := range r.True.ECDF {
		if f < b.Lower[j] || f > b.Upper[j] {
			return false
		}
	}
	return true
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sample returns up to k indices spread over 0..n−1, including the last.
func sample(n, k int) []int {
	if n <= k {
		k = n
	}
	idx := make([]int, 0, k)
	for j := 1; j <= k; j++ {
		i := j*n/k - 1
		if len(idx) == 0 || i != idx[len(idx)-1] {
			idx = append(idx, i)
		}
	}
	return idx
}

func pValue(p *float64) string {
	if p == nil {
		return "undefined"
	}
	return fmt.Sprintf("%.4f", *p)
}

// privateCurve names the private curve the ROC area error measures.
func (r *Report) privateCurve() string {
	if r.ROC.Smoothing == "none" {
		return "raw"
	}
	return "smoothed"
}

// phaseSeconds lists the phases' seconds in the order they run.
func phaseSeconds(s map[string]float64) string {
	var out []string
	for _, ph := range []string{"data", "setup", "upload", "release", "query", "hosmer"} {
		if v, ok := s[ph]; ok {
			out = append(out, fmt.Sprintf("%s %.3f", ph, v))
		}
	}
	return strings.Join(out, ", ")
}
