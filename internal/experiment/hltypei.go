package experiment

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
)

// HL type-I setting: hlBins bins over [0, 1], the kary mechanism, the
// level α, two servers (the deployed setting: each adds its own
// full-scale noise).
const (
	hlBins, hlAlpha, hlServers = 256, 0.05, 2
	hlMechanism                = "kary"
)

// hlSetup is what HLTypeI measures: data sets of each size n, B
// bootstrap draws per test, the ε axis and the Hosmer–Lemeshow plans
// (analysis.HosmerPlan names; "grid" is simulate's default, the roc
// allocation). Tests use a tiny one.
type hlSetup struct {
	sizes    []int
	draws    int
	epsilons []float64
	plans    []string
}

// hlModels are the true positive rates given the model's p: calibrated,
// the two miscalibrations of issue 15, then two milder ones at which the
// tests' powers differ.
var hlModels = []struct {
	name string
	rate func(p float64) float64
}{
	{"calibrated: y ~ Bernoulli(p)", func(p float64) float64 { return p }},
	{"y ~ Bernoulli(min(1, 1.3p))", func(p float64) float64 { return min(1, 1.3*p) }},
	{"y ~ Bernoulli(p^0.7)", func(p float64) float64 { return math.Pow(p, 0.7) }},
	{"y ~ Bernoulli(min(1, 1.05p))", func(p float64) float64 { return min(1, 1.05*p) }},
	{"y ~ Bernoulli(p^0.9)", func(p float64) float64 { return math.Pow(p, 0.9) }},
}

// hlTests are the three tests compared.
var hlTests = []string{"noise-aware (bootstrap)", "naive χ² on private H", "non-private χ²"}

// HLTypeI measures the Hosmer–Lemeshow tests at α = 0.05 over cfg.Runs
// data sets per model and size n (cfg.HLSizes): p ~ Beta(2, 5), y drawn
// by each of hlModels; for each data set, each plan and each ε
// (cfg.HLEpsilons), one release through two servers (twoServers: each
// adds its own full-scale draw, as simulate's do) and the rejection
// (type-I error on the calibrated model, power on the others) of the
// noise-aware test (hosmer.Plan.NullTest, B = cfg.HLDraws), of the naive
// χ²_{G−2} on the private H, and of the non-private textbook test
// (χ²_{G−2} on the exact groups, the same for every ε and plan: the
// design is paired), with binomial standard errors. One figure per plan
// and n ("hl-typeI" for grid at n = 10⁴, "hl-typeI-paper", and
// "-n100000" appended for other sizes), ε on the x axis.
func HLTypeI(ctx context.Context, cfg Config) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	return hlTypeI(ctx, cfg, hlSetup{sizes: cfg.HLSizes, draws: cfg.HLDraws, epsilons: cfg.HLEpsilons, plans: []string{"grid", "paper"}})
}

func hlTypeI(ctx context.Context, cfg Config, s hlSetup) ([]*Figure, error) {
	cfg = cfg.withDefaults()
	g, err := ecdf.NewLinearGrid(0, 1, hlBins)
	if err != nil {
		return nil, err
	}
	plans := make([]*hosmer.Plan, 0, len(s.plans)*len(s.epsilons))
	for _, name := range s.plans {
		for _, eps := range s.epsilons {
			pl, err := analysis.HosmerPlan(name, eps, hlBins, mechanism.Params{Name: hlMechanism})
			if err != nil {
				return nil, err
			}
			plans = append(plans, pl)
		}
	}
	pr := progress{cfg.Progress}
	pr.start("hl-typeI", len(s.sizes)*len(hlModels)*cfg.Runs)
	defer pr.finish()
	var figs []*Figure
	for si, n := range s.sizes {
		rejected, err := hlRejections(ctx, cfg, g, s, n, uint64(si), plans, pr)
		if err != nil {
			return nil, fmt.Errorf("n = %d: %w", n, err)
		}
		figs = append(figs, hlFigures(cfg, s, n, rejected)...)
	}
	return figs, nil
}

// hlRejections returns rejected[m][k][t]: the data sets of size n of
// model m whose test t rejects at setting k (plan-major, then ε).
func hlRejections(ctx context.Context, cfg Config, g *ecdf.Grid, s hlSetup, n int, si uint64, plans []*hosmer.Plan, pr progress) ([][][3]int, error) {
	rejected := make([][][3]int, len(hlModels))
	for m, model := range hlModels {
		rejected[m] = make([][3]int, len(plans))
		for run := range cfg.Runs {
			// Each data set has its own stream: the result does not
			// depend on the order of the runs.
			id := uint64(m*cfg.Runs + run)
			r := rand.New(rand.NewPCG(cfg.Seed+si<<32, (15+id)<<8))
			rej, err := hlRun(ctx, r, g, n, s.draws, betaInstance(model.rate), plans, si<<40|id, hlServers)
			if err != nil {
				return nil, fmt.Errorf("%s, data set %d: %w", model.name, run+1, err)
			}
			for k := range plans {
				for t := range 3 {
					if rej[k][t] {
						rejected[m][k][t]++
					}
				}
			}
			pr.add()
		}
	}
	return rejected, nil
}

// hlFigures returns one figure per plan of the rejection counts of
// data sets of size n.
func hlFigures(cfg Config, s hlSetup, n int, rejected [][][3]int) []*Figure {
	var figs []*Figure
	for pi, name := range s.plans {
		id := "hl-typeI"
		if name != "grid" {
			id += "-" + name
		}
		if n != 10000 {
			id += fmt.Sprintf("-n%d", n)
		}
		fig := &Figure{ID: id, Title: fmt.Sprintf("Hosmer–Lemeshow rejection rate at α = %g, %s plan, n = %d, %s, N = %d, %d servers, B = %d", hlAlpha, name, n, hlMechanism, hlBins, hlServers, s.draws),
			XLabel: "ε", YLabel: "rejection rate", LogX: true, Runs: cfg.Runs}
		for m, model := range hlModels {
			for t, test := range hlTests {
				se := Series{Name: fmt.Sprintf("model %d, %s", m, test)}
				for ei, eps := range s.epsilons {
					rate := float64(rejected[m][pi*len(s.epsilons)+ei][t]) / float64(cfg.Runs)
					se.X, se.Y = append(se.X, eps), append(se.Y, rate)
					se.StdErr = append(se.StdErr, math.Sqrt(rate*(1-rate)/float64(cfg.Runs)))
				}
				fig.Series = append(fig.Series, se)
			}
			fig.Notes = append(fig.Notes, fmt.Sprintf("model %d: %s (%s)", m, model.name, map[bool]string{true: "type-I error", false: "power"}[m == 0]))
		}
		fig.Notes = append(fig.Notes,
			fmt.Sprintf("release: the %s plan at each ε, %s, replace neighbours, through %d servers each adding a full-scale draw (the null test simulates the same law)", name, hlMechanism, hlServers),
			"the non-private test sees the same data sets at every ε and plan (paired design)",
			"an undefined private H counts as a rejection by neither private test")
		figs = append(figs, fig)
	}
	return figs
}

// hlRun draws one data set of n instances (model probability and label)
// by instance and says, for each plan, which of the three tests reject
// (the noise-aware one with draws bootstrap draws), with the noise law
// of servers servers.
func hlRun(ctx context.Context, r *rand.Rand, g *ecdf.Grid, n, draws int, instance func(*rand.Rand) (p float64, y int), plans []*hosmer.Plan, seed uint64, servers int) ([][3]bool, error) {
	out := make([][3]bool, len(plans))
	parties := make([]*party.Party, n)
	for j := range parties {
		p, y := instance(r)
		pt, err := party.New(party.Instance{Score: p, Label: y, Probability: p, HasProbability: true}, g)
		if err != nil {
			return nil, err
		}
		parties[j] = pt
	}
	c, err := newCurator(parties, hlBins)
	if err != nil {
		return nil, err
	}
	u := &twoServers{Curator: c, servers: servers, extra: map[payload.ReleaseID]map[core.Component]mechanism.Release{}}
	bins, labels, probs := make([]int, n), make([]int, n), make([]float64, n)
	for k, p := range parties {
		bins[k], labels[k] = p.Bin(), int(p.Payload(core.Label))
		probs[k] = float64(p.Payload(core.Probability)) / core.Probability.Scale()
	}
	exact, err := analysis.TrueHosmer(bins, labels, probs, hlBins, 0)
	if err != nil {
		return nil, err
	}
	for k, pl := range plans {
		rels, err := pl.Create(ctx, u)
		if err != nil {
			return nil, err
		}
		h, err := analysis.RunHosmer(ctx, u, pl, rels, g, "l2", analysis.HosmerConfig(hlBins, n, 0), analysis.Bootstrap{Draws: draws, Seed: seed<<8 | uint64(k)})
		if err != nil {
			return nil, err
		}
		out[k][0] = h.PValuePrivate != nil && *h.PValuePrivate <= hlAlpha
		out[k][1] = h.PValueNaive != nil && *h.PValueNaive <= hlAlpha
		out[k][2] = exact.PValue <= hlAlpha
	}
	return out, nil
}

// betaInstance draws an instance of hl-typeI: p ~ Beta(2, 5) (beta25)
// and y ~ Bernoulli(rate(p)).
func betaInstance(rate func(float64) float64) func(*rand.Rand) (float64, int) {
	return func(r *rand.Rand) (float64, int) {
		p := beta25(r)
		if r.Float64() < rate(p) {
			return p, 1
		}
		return p, 0
	}
}

// twoServers is a trusted curator with the noise law of hlServers
// servers (or of its servers field): each release says Servers =
// hlServers, and every answer carries the curator's draw plus
// hlServers − 1 further independent
// full-scale draws of the same mechanism, exactly the sum the two
// servers' answers add up to.
type twoServers struct {
	*curator.Curator
	// servers is the number of servers whose noise law it has (0:
	// hlServers; 1: the curator alone).
	servers int
	mu      sync.Mutex
	extra   map[payload.ReleaseID]map[core.Component]mechanism.Release
}

// NewRelease implements aggregation.UStat.
func (t *twoServers) NewRelease(ctx context.Context, spec aggregation.ReleaseSpec) (*aggregation.Release, error) {
	rel, err := t.Curator.NewRelease(ctx, spec)
	if err != nil {
		return nil, err
	}
	rel.Servers = cmp.Or(t.servers, hlServers)
	if rel.Servers == 1 {
		return rel, nil
	}
	seed, err := noise.NewSeed()
	if err != nil {
		return nil, err
	}
	m := map[core.Component]mechanism.Release{}
	for _, c := range rel.Spec.Components {
		m[c] = rel.Mechanism(c).NewRelease(payload.ComponentSeed(seed, c))
	}
	t.mu.Lock()
	t.extra[rel.ID] = m
	t.mu.Unlock()
	return rel, nil
}

// Sum implements aggregation.UStat.
func (t *twoServers) Sum(ctx context.Context, q aggregation.Query) (*aggregation.Result, error) {
	res, err := t.Curator.Sum(ctx, q)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	nr := t.extra[q.Release.ID][q.Component]
	t.mu.Unlock()
	if nr == nil { // a curator alone
		return res, nil
	}
	for j, i := range q.Prefixes {
		res.Sums[j] += nr.PrefixNoise(i)
	}
	return res, nil
}

// beta25 draws Beta(2, 5): the 2nd smallest of 6 uniforms.
func beta25(r *rand.Rand) float64 {
	a, b := math.Inf(1), math.Inf(1)
	for range 6 {
		switch v := r.Float64(); {
		case v < a:
			a, b = v, a
		case v < b:
			b = v
		}
	}
	return b
}
