package audit

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// CountingOnTrees is the mechanism name of the black-box audit of
// hierarchy.CountingOnTrees (RunCountingOnTrees), beside Mechanisms.
const CountingOnTrees = "counting-on-trees"

// Unchecked states what the counting-on-trees audit cannot check.
const Unchecked = "the sparse vector's data-dependent decisions make the release's privacy loss depend on the data: " +
	"no fixed-noise likelihood ratio and no worst-case pair exist, so the end-to-end bound covers one pair and the events learned from the trials, " +
	"and the step bounds cover each step on its own, not their adaptive composition (proved in ecdf/hierarchy's doc.go, checked exactly by TestCountingOnTreesLedger)"

// TreeResult is the outcome of RunCountingOnTrees; its JSON form is the
// output of `fedecdf audit --mechanism counting-on-trees --format json`.
type TreeResult struct {
	Mechanism  string  `json:"mechanism"`
	Instance   string  `json:"instance"`
	Neighbours string  `json:"neighbours"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Alpha      float64 `json:"alpha"`
	Bins       int     `json:"bins"`
	Arity      int     `json:"arity"`
	Trials     int     `json:"trials"`
	Confidence float64 `json:"confidence"`
	// Release is the end-to-end audit of whole releases on one pair.
	Release ReleaseOutcome `json:"release"`
	// Steps are the audits of the release's randomised steps, each
	// against its own share of the budget.
	Steps []StepOutcome `json:"steps"`
	// Verdict is "consistent" when no lower bound exceeds its claim.
	Verdict   string `json:"verdict"`
	Unchecked string `json:"unchecked"`
}

// ReleaseOutcome is the end-to-end audit: releases of D and D′ (one leaf
// of Records records, and one record more, or one moved to the next
// leaf under replace-one), distinguished by an event on the released
// count of the first leaf learned on half of the trials (the values
// whose empirical likelihood ratio is largest).
type ReleaseOutcome struct {
	Description string `json:"description"`
	Records     int64  `json:"records"`
	Outputs     int    `json:"outputs"` // distinct released counts of the first leaf seen
	Estimate
	// ControlLowerBound is the bound on the release built at 2ε (every
	// noise scale about halved), which a powerful audit shows above ε.
	ControlLowerBound float64 `json:"control_lower_bound"`
	ControlCaught     bool    `json:"control_caught"`
}

// StepOutcome is the audit of one step (hierarchy.Step) against its
// share (Epsilon, Delta) of one unit change's budget, and of the same
// step with every noise scale halved (the control, share ControlEpsilon
// = 2·Epsilon) against the honest share.
type StepOutcome struct {
	Name    string  `json:"name"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Input   string  `json:"input"`
	Estimate
	ControlEpsilon    float64 `json:"control_epsilon"`
	ControlLowerBound float64 `json:"control_lower_bound"`
	ControlCaught     bool    `json:"control_caught"`
}

// RunCountingOnTrees audits hierarchy.CountingOnTrees as `fedecdf
// histogram` releases it (fresh seeds, the release's own code): end to
// end on a pair of small data sets, and step by step (the root bound,
// the first and the last round's truncated Laplace step and sparse
// vector) on each step's worst-case inputs. Lower bounds are
// Clopper–Pearson, ε ≥ ln((P_lo(E|D) − δ)/P_hi(E|D′)) (Estimate), at 95 %.
func RunCountingOnTrees(ctx context.Context, cfg Config) (*TreeResult, error) {
	if err := cfg.validateTree(); err != nil {
		return nil, err
	}
	p := hierarchy.Params{Bins: cfg.Bins, Arity: cfg.Arity, Epsilon: cfg.Epsilon, Delta: cfg.Delta, Alpha: cfg.Alpha, Relation: cfg.Relation}
	honest, err := hierarchy.NewCountingOnTrees(p)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	p.Epsilon *= 2
	control, err := hierarchy.NewCountingOnTrees(p)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	res := &TreeResult{
		Mechanism: CountingOnTrees, Instance: honest.Name(), Neighbours: cfg.Relation.String(),
		Epsilon: cfg.Epsilon, Delta: cfg.Delta, Alpha: cfg.Alpha, Bins: cfg.Bins, Arity: cfg.Arity,
		Trials: cfg.Trials, Confidence: Confidence, Unchecked: Unchecked,
	}
	src := cfg.Rand
	if src == nil {
		src = rand.Reader
	}
	if res.Release, err = cfg.auditRelease(ctx, honest, control, src); err != nil {
		return nil, err
	}
	if res.Steps, err = cfg.auditSteps(ctx, honest, res.Release.Records, src); err != nil {
		return nil, err
	}
	res.Verdict = "consistent"
	if res.Release.LowerBound > cfg.Epsilon {
		res.Verdict = "VIOLATION"
	}
	for _, s := range res.Steps {
		if s.LowerBound > s.Epsilon {
			res.Verdict = "VIOLATION"
		}
	}
	return res, nil
}

// MaxTreeBins bounds --bins for counting-on-trees: the end-to-end event
// is learned over whole releases, whose number of distinct values grows
// with the tree.
const MaxTreeBins = 64

// validateTree checks cfg for RunCountingOnTrees, naming the bad field.
func (cfg *Config) validateTree() error {
	bad := func(field string, value any, reason string) error {
		return &FieldError{Field: field, Value: value, Reason: reason}
	}
	switch {
	case math.IsNaN(cfg.Epsilon) || math.IsInf(cfg.Epsilon, 0) || cfg.Epsilon <= 0:
		return bad("epsilon", cfg.Epsilon, "must be positive and finite")
	case !(cfg.Delta > 0 && cfg.Delta < 1):
		return bad("delta", cfg.Delta, "counting-on-trees is an (ε, δ) mechanism: give δ in (0, 1), e.g. 1e-6")
	case !(cfg.Alpha > 0 && cfg.Alpha < 1):
		return bad("alpha", cfg.Alpha, "counting-on-trees needs a multiplicative slack in (0, 1)")
	case cfg.Arity < 2:
		return bad("arity", cfg.Arity, "must be at least 2")
	case cfg.Bins < 2 || cfg.Bins > MaxTreeBins:
		return bad("bins", cfg.Bins, fmt.Sprintf("must be between 2 and %d for counting-on-trees", MaxTreeBins))
	case cfg.Trials < minTrials || cfg.Trials > maxTrials:
		return bad("trials", cfg.Trials, fmt.Sprintf("must be between %d (half choose the test, half evaluate it) and %d", minTrials, maxTrials))
	case cfg.Relation != mechanism.ReplaceOne && cfg.Relation != mechanism.AddRemove:
		return bad("neighbours", cfg.Relation, "want replace or addremove")
	}
	return nil
}

// treePair returns D (w records in the first leaf) and D′ (one record
// more there under add/remove; under replace-one, one of them moved to
// the second leaf).
func treePair(bins int, w int64, r mechanism.Relation) (d, d1 []int64, desc string) {
	d, d1 = make([]int64, bins), make([]int64, bins)
	d[0], d1[0] = w, w+1
	desc = fmt.Sprintf("D: %d records in bin 1; D′: %d", w, w+1)
	if r == mechanism.ReplaceOne {
		d[0], d1[0], d1[1] = w+1, w, 1
		desc = fmt.Sprintf("D: %d records in bin 1; D′: one of them moved to bin 2", w+1)
	}
	return d, d1, desc
}

// pilotTrials is the number of releases per candidate size of D.
const pilotTrials = 300

// auditRelease chooses the size w of D among powers of two, the one
// whose first leaf is released non-zero (classified above some
// threshold) closest to half of the time, where the sparse vector's
// decision is least certain, then audits the releases of the pair.
func (cfg *Config) auditRelease(ctx context.Context, honest, control *hierarchy.CountingOnTrees, r io.Reader) (ReleaseOutcome, error) {
	leaf := honest.Tree().Depth() - 1
	bestW, bestGap := int64(1), 2.0
	for w := int64(1); w <= 1<<16; w *= 2 {
		d, _, _ := treePair(cfg.Bins, w, cfg.Relation)
		keys, err := cfg.draws(ctx, "choosing the pair", pilotTrials, r, func(seed noise.Seed) (uint64, error) {
			out, err := honest.Release(d, seed)
			if err != nil {
				return 0, err
			}
			return uint64(b2i(out[leaf][0] != 0)), nil
		})
		if err != nil {
			return ReleaseOutcome{}, err
		}
		on := 0
		for _, k := range keys {
			on += int(k)
		}
		if gap := math.Abs(float64(on)/pilotTrials - 0.5); gap < bestGap {
			bestW, bestGap = w, gap
		}
	}
	d, d1, desc := treePair(cfg.Bins, bestW, cfg.Relation)
	o := ReleaseOutcome{Description: desc, Records: d[0]}
	run := func(phase string, m *hierarchy.CountingOnTrees) (Estimate, int, error) {
		var keys [2][]uint64
		for side, h := range [][]int64{d, d1} {
			var err error
			keys[side], err = cfg.draws(ctx, fmt.Sprintf("%s, side %d", phase, side+1), cfg.Trials, r, func(seed noise.Seed) (uint64, error) {
				out, err := m.Release(h, seed)
				if err != nil {
					return 0, err
				}
				return uint64(out[leaf][0]), nil
			})
			if err != nil {
				return Estimate{}, 0, err
			}
		}
		e, n := learnedEstimate(keys, cfg.Delta)
		return e, n, nil
	}
	var err error
	if o.Estimate, o.Outputs, err = run("honest release", honest); err != nil {
		return o, err
	}
	ctl, _, err := run("control release", control)
	o.ControlLowerBound, o.ControlCaught = ctl.LowerBound, ctl.LowerBound > cfg.Epsilon
	return o, err
}

// auditSteps audits the root bound and the first and last rounds' steps
// of the schedule for root bound u = 2w + 1 (a public stand-in: each
// step's share hardly depends on it) against their shares, and the same
// steps with every noise scale halved (ControlSteps) against the honest
// shares, half of their own.
func (cfg *Config) auditSteps(ctx context.Context, honest *hierarchy.CountingOnTrees, w int64, r io.Reader) ([]StepOutcome, error) {
	hs, err := honest.Steps(2*w + 1)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	cs, err := honest.ControlSteps(2*w + 1)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	pick := func(s []hierarchy.Step) []hierarchy.Step {
		if len(s) <= 5 {
			return s
		}
		return append(s[:3:3], s[len(s)-2:]...)
	}
	hs, cs = pick(hs), pick(cs)
	var out []StepOutcome
	for i, s := range hs {
		o := StepOutcome{Name: s.Name, Epsilon: s.Epsilon, Delta: s.Delta}
		if o.Estimate, o.Input, err = cfg.auditStep(ctx, s, r); err != nil {
			return nil, err
		}
		if i < len(cs) {
			c := cs[i]
			o.ControlEpsilon = c.Epsilon
			ce, _, err := cfg.auditStep(ctx, c, r)
			if err != nil {
				return nil, err
			}
			o.ControlLowerBound, o.ControlCaught = ce.LowerBound, ce.LowerBound > c.Epsilon/2
		}
		out = append(out, o)
	}
	return out, nil
}

// svtQueries is the length of the query stream the sparse-vector step
// is audited on. Its claim holds for any stream of sensitivity-1
// queries, and the loss the stream of Dwork–Roth's proof shows grows with
// its length (at ε = 4, δ = 10⁻³ on 4 bins: 0.36 of the share 0.63 with
// 3 queries, 0.52 with 5, 0.62 with 8) while the event's probability
// falls (0.10, 0.03, 0.009): 5 balances the two at 10⁴ trials.
const svtQueries = 5

// auditStep draws s on its worst-case pair of inputs: a count y and
// y + 1 (at the step's threshold) for the root bound and a truncated
// Laplace step; for a sparse-vector instance the stream of Dwork–Roth's
// proof, svtQueries queries at the threshold against the first ones one
// below it and the last one above.
func (cfg *Config) auditStep(ctx context.Context, s hierarchy.Step, r io.Reader) (Estimate, string, error) {
	q0, q1 := []int64{s.Threshold}, []int64{s.Threshold + 1}
	input := fmt.Sprintf("count %d vs %d", s.Threshold, s.Threshold+1)
	if s.Queries > 1 {
		q0, q1 = make([]int64, svtQueries), make([]int64, svtQueries)
		for i := range q0 {
			q0[i], q1[i] = s.Threshold, s.Threshold-1
		}
		q1[len(q1)-1] = s.Threshold + 1
		input = fmt.Sprintf("%d queries at %d vs %d−1 … then +1", svtQueries, s.Threshold, s.Threshold)
	}
	var keys [2][]uint64
	for side, q := range [][]int64{q0, q1} {
		var err error
		keys[side], err = cfg.draws(ctx, fmt.Sprintf("%s, side %d", s.Name, side+1), cfg.Trials, r, func(seed noise.Seed) (uint64, error) {
			return uint64(s.Draw(q, seed.Stream(stepDomain, 0))), nil
		})
		if err != nil {
			return Estimate{}, "", err
		}
	}
	if s.Queries <= 1 {
		// A count plus noise of a log-concave law: by Neyman–Pearson the
		// most powerful test of the shift is a threshold on the output.
		var v [2][]float64
		for side := range keys {
			v[side] = make([]float64, len(keys[side]))
			for i, k := range keys[side] {
				v[side][i] = float64(int64(k))
			}
		}
		return estimate(v[0], v[1], s.Delta), input, nil
	}
	e, _ := learnedEstimate(keys, s.Delta)
	return e, input, nil
}

// stepDomain separates the audit's step streams ("aust").
const stepDomain uint32 = 0x61757374

// learnedEstimate turns the outputs of the two sides into the statistic
// S(o) = ln(P̂′(o)/P̂(o)), the empirical likelihood ratio learned on the
// first half of each side (add-½ smoothed), and bounds ε with estimate,
// whose threshold is chosen on those first halves too and evaluated on
// the second halves: the event {S ≥ τ} is fixed before the outcomes that
// bound it are seen. It also returns the number of distinct outputs.
func learnedEstimate(keys [2][]uint64, delta float64) (Estimate, int) {
	var counts [2]map[uint64]float64
	seen := map[uint64]bool{}
	for side := range keys {
		counts[side] = map[uint64]float64{}
		for i, k := range keys[side] {
			seen[k] = true
			if i < len(keys[side])/2 {
				counts[side][k]++
			}
		}
	}
	h0, h1 := float64(len(keys[0])/2), float64(len(keys[1])/2)
	score := func(k uint64) float64 {
		return math.Log((counts[1][k]+0.5)/h1) - math.Log((counts[0][k]+0.5)/h0)
	}
	var s [2][]float64
	for side := range keys {
		s[side] = make([]float64, len(keys[side]))
		for i, k := range keys[side] {
			s[side][i] = score(k)
		}
	}
	return estimate(s[0], s[1], delta), len(seen)
}

// draws runs f on n fresh seeds read in order from r, on cfg's workers.
func (cfg *Config) draws(ctx context.Context, phase string, n int, r io.Reader, f func(noise.Seed) (uint64, error)) ([]uint64, error) {
	out := make([]uint64, n)
	src := &seedSource{r: r, total: n}
	prog := newLockedProgress(cfg.Progress, phase, n)
	defer prog.finish()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ferr error
	for range cfg.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				t, seed, ok := src.next()
				if !ok {
					return
				}
				v, err := f(seed)
				if err != nil {
					mu.Lock()
					ferr = cmp.Or(ferr, err)
					mu.Unlock()
					return
				}
				out[t] = v
				prog.add(1)
			}
		}()
	}
	wg.Wait()
	if err := cmp.Or(ctx.Err(), src.err, ferr); err != nil {
		return nil, fmt.Errorf("audit: %s: %w", phase, err)
	}
	return out, nil
}
