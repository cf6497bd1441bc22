package audit

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/payload"
)

var (
	// ErrInvalid is wrapped by every *FieldError: the configuration cannot
	// be audited.
	ErrInvalid = errors.New("audit: invalid configuration")
	// ErrPattern means the mechanism's noise pattern is not one the
	// auditor models (Laplace node noise on a laminar ±1 pattern, or
	// Gaussian noise with a regular covariance).
	ErrPattern = errors.New("audit: unsupported noise pattern")
)

// FieldError is an invalid Config field; Field is the field's
// command-line name (mechanism, epsilon, delta, bins, trials, k).
type FieldError struct {
	Field  string
	Value  any
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("audit: %s %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Mechanisms lists the mechanism names Run audits.
var Mechanisms = []string{"tree", "kary", "cascade", "gaussian-tree", "partitioned"}

// Limits of a Config.
const (
	// MaxBins bounds N: the worst pair is searched among all O(N²) moves
	// and every trial evaluates a likelihood over O(N) nodes.
	MaxBins = 256
	// minTrials is the fewest trials per side: half choose the threshold,
	// half evaluate it. maxTrials bounds the memory of the statistics.
	minTrials = 100
	maxTrials = 10_000_000
)

// Config is one audit.
type Config struct {
	Mechanism string  // tree, kary, cascade, gaussian-tree or partitioned
	K         int     // arity of kary (0: the best for Bins)
	Arity     int     // arity of the counting-on-trees tree
	Alpha     float64 // multiplicative slack of counting-on-trees, in (0, 1)
	Epsilon   float64 // claimed ε of one release
	Delta     float64 // claimed δ (0 for pure ε-DP; cascade and gaussian-tree need δ > 0)
	Relation  mechanism.Relation
	Component payload.Component
	Bins      int // N
	Trials    int // releases drawn per side of the pair, for each of the honest and the control mechanism
	// Rand supplies the 32-byte release seeds, one per trial (nil:
	// crypto/rand, as a server draws them).
	Rand io.Reader
	// Workers is the number of goroutines drawing releases (0: GOMAXPROCS).
	Workers int
	// Progress, if not nil, is told of each phase.
	Progress Progress
}

// Progress follows the phases of a run: Start(phase, total) begins a
// phase of total trials, Add(k) reports k more done, Finish ends it.
// Calls come from one goroutine at a time.
type Progress interface {
	Start(phase string, total int)
	Add(k int)
	Finish()
}

// Outcome is the audit of one mechanism on the pair.
type Outcome struct {
	// Instance is the mechanism's name with its parameters (e.g.
	// "kary(k=12)").
	Instance string `json:"instance"`
	// PairNorm is the pair's Norm in this mechanism's noise metric and
	// PairEpsilon the ε at δ that this pair can show at most: the
	// largest lower bound the test could certify on infinitely many
	// trials if it were optimal.
	PairNorm    float64 `json:"pair_norm"`
	PairEpsilon float64 `json:"pair_epsilon"`
	Estimate
}

// Control is the audit of the control mechanism: the same mechanism built
// at 2ε, i.e. with half the noise scale for the Laplace mechanisms (about
// half for the Gaussian ones), which a working audit must catch.
type Control struct {
	Epsilon float64 `json:"epsilon"`
	Outcome
	// Caught reports LowerBound > the claimed ε.
	Caught bool `json:"caught"`
}

// Result is the outcome of Run; its JSON form is the output of
// `fedecdf audit --format json`.
type Result struct {
	Mechanism  string  `json:"mechanism"`
	Neighbours string  `json:"neighbours"`
	Component  string  `json:"component"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Bins       int     `json:"bins"`
	Trials     int     `json:"trials"`
	Confidence float64 `json:"confidence"`
	Pair       Pair    `json:"pair"`
	Statistic  string  `json:"statistic"`
	Outcome
	// Verdict is "consistent" when LowerBound ≤ Epsilon and "VIOLATION"
	// otherwise.
	Verdict string  `json:"verdict"`
	Control Control `json:"control"`
}

// Run audits the release of cfg.Component under cfg.Mechanism as a
// server makes it (payload.ComponentMechanism, NewRelease on a fresh
// seed): it derives the worst-case neighbouring pair, draws cfg.Trials
// releases on each side for the claimed mechanism and for the control,
// and bounds ε from below (see the package documentation). It refuses
// CountingOnTrees, which RunCountingOnTrees audits.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	params := mechanism.Params{Name: cfg.Mechanism, Bins: cfg.Bins, Epsilon: cfg.Epsilon, Delta: cfg.Delta, K: cfg.K, Relation: cfg.Relation}
	honest, err := newSubject(params, cfg.Component)
	if err != nil {
		return nil, err
	}
	if a, ok := honest.m.(interface{ Arity() int }); ok && cfg.Mechanism == "kary" {
		params.K = a.Arity() // the control keeps the audited arity
	}
	params.Epsilon *= 2
	control, err := newSubject(params, cfg.Component)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Mechanism: cfg.Mechanism, Neighbours: cfg.Relation.String(), Component: cfg.Component.String(),
		Epsilon: cfg.Epsilon, Delta: cfg.Delta, Bins: cfg.Bins, Trials: cfg.Trials, Confidence: Confidence,
		Pair: worstPair(honest.mdl, cfg.Bins, cfg.Relation, cfg.Component), Statistic: honest.mdl.statisticName(),
	}
	if res.Outcome, err = cfg.audit(ctx, "honest release", honest, res.Pair); err != nil {
		return nil, err
	}
	res.Control.Epsilon = params.Epsilon
	if res.Control.Outcome, err = cfg.audit(ctx, "control release", control, res.Pair); err != nil {
		return nil, err
	}
	res.Verdict = "consistent"
	if res.LowerBound > cfg.Epsilon {
		res.Verdict = "VIOLATION"
	}
	res.Control.Caught = res.Control.LowerBound > cfg.Epsilon
	return res, nil
}

// WorstPair returns the neighbouring pair Run audits for the release of
// component c under the mechanism p names: among all moves of one
// record, the one whose change of the released prefix sums is largest in
// the metric of the component mechanism's noise (Pair.Norm).
func WorstPair(p mechanism.Params, c payload.Component) (Pair, error) {
	s, err := newSubject(p, c)
	if err != nil {
		return Pair{}, err
	}
	return worstPair(s.mdl, p.Bins, p.Relation, c), nil
}

// subject is a component mechanism under audit, built as a server builds
// it, with the auditor's model of its noise.
type subject struct {
	m   mechanism.Mechanism
	mdl model
}

func newSubject(p mechanism.Params, c payload.Component) (subject, error) {
	m, err := payload.ComponentMechanism(p, c)
	if err != nil {
		return subject{}, fmt.Errorf("audit: %s at ε = %g: %w", p.Name, p.Epsilon, err)
	}
	mdl, err := newModel(m, c.Scale())
	if err != nil {
		return subject{}, err
	}
	return subject{m: m, mdl: mdl}, nil
}

// validate checks cfg, naming the bad field.
func (cfg *Config) validate() error {
	bad := func(field string, value any, reason string) error {
		return &FieldError{Field: field, Value: value, Reason: reason}
	}
	gaussian := cfg.Mechanism == "cascade" || cfg.Mechanism == "gaussian-tree"
	switch {
	case cfg.Mechanism == CountingOnTrees:
		return bad("mechanism", cfg.Mechanism, "audited by RunCountingOnTrees, not Run")
	case !validName(cfg.Mechanism):
		return bad("mechanism", cfg.Mechanism, "unknown; want "+strings.Join(Mechanisms[:len(Mechanisms)-1], ", ")+" or "+Mechanisms[len(Mechanisms)-1])
	case math.IsNaN(cfg.Epsilon) || math.IsInf(cfg.Epsilon, 0) || cfg.Epsilon <= 0:
		return bad("epsilon", cfg.Epsilon, "must be positive and finite")
	case math.IsNaN(cfg.Delta) || cfg.Delta < 0 || cfg.Delta >= 1:
		return bad("delta", cfg.Delta, "must be in [0, 1)")
	case gaussian && cfg.Delta == 0:
		return bad("delta", cfg.Delta, cfg.Mechanism+" is an (ε, δ) mechanism: give δ in (0, 1), e.g. 1e-6")
	case cfg.Bins < 2 || cfg.Bins > MaxBins:
		return bad("bins", cfg.Bins, fmt.Sprintf("must be between 2 and %d (the audit searches every pair of bins)", MaxBins))
	case cfg.Trials < minTrials || cfg.Trials > maxTrials:
		return bad("trials", cfg.Trials, fmt.Sprintf("must be between %d (half choose the test, half evaluate it) and %d", minTrials, maxTrials))
	case cfg.K < 0:
		return bad("k", cfg.K, "must be 0 (the best arity) or at least 2")
	case !cfg.Component.Valid():
		return bad("component", cfg.Component, "unknown payload component")
	case cfg.Relation != mechanism.ReplaceOne && cfg.Relation != mechanism.AddRemove:
		return bad("neighbours", cfg.Relation, "want replace or addremove")
	}
	return nil
}

func validName(name string) bool {
	for _, n := range Mechanisms {
		if n == name {
			return true
		}
	}
	return false
}

// audit draws cfg.Trials releases of s on each side of the pair and
// estimates the test's error rates.
func (cfg *Config) audit(ctx context.Context, phase string, s subject, pair Pair) (Outcome, error) {
	c0, c1 := pair.sums(cfg.Bins, cfg.Relation)
	stats, err := cfg.trials(ctx, phase, s, [2][]float64{c0, c1})
	if err != nil {
		return Outcome{}, err
	}
	norm := s.mdl.norm(pair.First, pair.Last)
	return Outcome{
		Instance: s.m.Name(), PairNorm: norm, PairEpsilon: s.mdl.epsilon(norm, cfg.Delta),
		Estimate: estimate(stats[0], stats[1], cfg.Delta),
	}, nil
}

// trials returns the statistic of cfg.Trials releases on each side:
// release t of side d adds the noise of sub.m.NewRelease(ComponentSeed(
// seed, component)) — the server's path — to the prefix sums sums[d].
func (cfg *Config) trials(ctx context.Context, phase string, sub subject, sums [2][]float64) ([2][]float64, error) {
	unit := cfg.Component.Scale()
	var ints [2][]int64
	for s := range ints {
		ints[s] = make([]int64, cfg.Bins)
		for i, c := range sums[s] {
			ints[s][i] = int64(c * unit)
		}
	}
	out := [2][]float64{make([]float64, cfg.Trials), make([]float64, cfg.Trials)}
	src := &seedSource{r: cfg.Rand, total: 2 * cfg.Trials}
	if src.r == nil {
		src.r = rand.Reader
	}
	prog := newLockedProgress(cfg.Progress, phase, 2*cfg.Trials)
	defer prog.finish()
	var wg sync.WaitGroup
	for range cfg.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stat := sub.mdl.statistic(sums[0], sums[1])
			y := make([]float64, cfg.Bins)
			for ctx.Err() == nil {
				t, seed, ok := src.next()
				if !ok {
					return
				}
				side, k := t/cfg.Trials, t%cfg.Trials
				rel := sub.m.NewRelease(payload.ComponentSeed(seed, cfg.Component))
				for i := range y {
					y[i] = float64(ints[side][i]+rel.PrefixNoise(i+1)) / unit
				}
				out[side][k] = stat(y)
				prog.add(1)
			}
		}()
	}
	wg.Wait()
	if err := cmp.Or(ctx.Err(), src.err); err != nil {
		return [2][]float64{}, fmt.Errorf("audit: %s: %w", phase, err)
	}
	return out, nil
}

// seedSource hands out trial indices with their 32-byte release seeds,
// read from r in index order, so that a deterministic reader gives a
// reproducible audit whatever the workers.
type seedSource struct {
	mu    sync.Mutex
	r     io.Reader
	n     int
	total int
	err   error
}

// next returns the next trial and its seed, or false when all are given
// out or reading failed (err).
func (s *seedSource) next() (int, noise.Seed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var seed noise.Seed
	if s.n == s.total || s.err != nil {
		return 0, seed, false
	}
	if _, err := io.ReadFull(s.r, seed[:]); err != nil {
		s.err = fmt.Errorf("drawing a release seed: %w", err)
		return 0, seed, false
	}
	s.n++
	return s.n - 1, seed, true
}

func (cfg *Config) workers() int {
	if cfg.Workers > 0 {
		return cfg.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// lockedProgress serialises the workers' progress reports.
type lockedProgress struct {
	mu sync.Mutex
	p  Progress
}

func newLockedProgress(p Progress, phase string, total int) *lockedProgress {
	if p != nil {
		p.Start(phase, total)
	}
	return &lockedProgress{p: p}
}

func (l *lockedProgress) add(k int) {
	if l.p == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Add(k)
}

func (l *lockedProgress) finish() {
	if l.p != nil {
		l.p.Finish()
	}
}

// laplaceScale returns the scale t of the discrete Laplace Lap_Z(t) of
// variance v: v = 1/(2 sinh²(1/(2t))) (noise.DiscreteLaplace.Variance),
// so t = 1/(2 asinh(1/√(2v))).
func laplaceScale(v float64) float64 {
	return 1 / (2 * math.Asinh(1/math.Sqrt(2*v)))
}
