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

// WriteText writes the counting-on-trees audit as `fedecdf audit`
// prints it: the end-to-end audit, a table of the steps and what the
// audit cannot check.
func (r *TreeResult) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("fedecdf audit: %s, %s neighbours, N = %d bins\n", r.Instance, r.Neighbours, r.Bins)
	p("claim: one release is (ε = %g, δ = %g)-DP; %d releases per side, each on a fresh seed\n", r.Epsilon, r.Delta, r.Trials)
	p("event: the outputs with the largest empirical likelihood ratio, learned on half of the trials; bounds from the other half at %g %% (Clopper–Pearson), ε ≥ ln((P_lo(E|D) − δ)/P_hi(E|D′))\n\n", 100*r.Confidence)
	rel := r.Release
	p("end to end\t%s (%d distinct released counts of bin 1)\n", rel.Description, rel.Outputs)
	p("\tε lower bound %.3f (claim %g); control at 2ε: %.3f, %s\n\n", rel.LowerBound, r.Epsilon, rel.ControlLowerBound, caught(rel.ControlCaught))
	p("step (one unit change)\tinput\tshare ε\tshare δ\tFPR upper\tFNR upper\tε lower bound\tcontrol share/2\tcontrol bound\n")
	for _, s := range r.Steps {
		p("%s\t%s\t%.4f\t%.2g\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f %s\n", s.Name, s.Input, s.Epsilon, s.Delta, s.FPRUpper, s.FNRUpper, s.LowerBound, s.ControlEpsilon/2, s.ControlLowerBound, caught(s.ControlCaught))
	}
	p("\nverdict: %s\n", r.Verdict)
	p("not checked: %s\n", r.Unchecked)
	return tw.Flush()
}

func caught(b bool) string {
	if b {
		return "caught"
	}
	return "NOT caught"
}
