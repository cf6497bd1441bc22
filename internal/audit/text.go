package audit

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the result as `fedecdf audit` prints it: the claim,
// the pair, the statistic, a table of the honest and control audits and
// the verdict.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("fedecdf audit: %s, %s neighbours, component %s, N = %d bins\n", r.Instance, r.Neighbours, r.Component, r.Bins)
	p("claim: one release is (ε = %g, δ = %g)-DP; %d releases per side, each on a fresh seed (one server's noise)\n\n", r.Epsilon, r.Delta, r.Trials)
	p("worst-case pair\t%s\n", r.Pair.Description)
	p("\t%s = %.4g, the largest over all %s moves\n", r.Pair.NormName, r.Pair.Norm, r.Neighbours)
	p("test statistic\t%s\n", r.Statistic)
	p("\tthreshold from half of the trials, error rates from the other half, bounds at %g %% (Clopper–Pearson)\n\n", 100*r.Confidence)
	p("release\tmechanism\tε\tpair ε\tFPR\tFNR\tFPR upper\tFNR upper\tε lower bound\n")
	row := func(name string, eps float64, o Outcome) {
		p("%s\t%s\t%g\t%.3f\t%.4f\t%.4f\t%.4f\t%.4f\t%.3f\n",
			name, o.Instance, eps, o.PairEpsilon, o.FPR, o.FNR, o.FPRUpper, o.FNRUpper, o.LowerBound)
	}
	row("honest", r.Epsilon, r.Outcome)
	row("control (scale/2)", r.Control.Epsilon, r.Control.Outcome)
	if r.Verdict == "consistent" {
		p("\nverdict: consistent (lower bound %.3f ≤ ε = %g)\n", r.LowerBound, r.Epsilon)
	} else {
		p("\nverdict: %s: the release is distinguishable beyond its claim (lower bound %.3f > ε = %g at %g %% confidence)\n", r.Verdict, r.LowerBound, r.Epsilon, 100*r.Confidence)
	}
	if r.Control.Caught {
		p("control: caught (lower bound %.3f > ε = %g): the test detects a noise scale halved\n", r.Control.LowerBound, r.Epsilon)
	} else {
		p("control: NOT caught (lower bound %.3f ≤ ε = %g): at these settings the test cannot detect a noise scale halved, so a consistent verdict is weak evidence; more --trials or fewer --bins give it power\n", r.Control.LowerBound, r.Epsilon)
	}
	return tw.Flush()
}
