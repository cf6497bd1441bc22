package hosmer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultNullDraws is the number B of simulated null data sets NullTest
// draws unless told otherwise: B = 500 gives the p-value a Monte-Carlo
// standard error √(p(1−p)/B) of at most 0.022, 0.010 at p = 0.05, and
// keeps the whole inference of the default `fedecdf simulate` within
// the cost EXPERIMENTS.md, "Cost of the inference", sets as its goal.
const DefaultNullDraws = 500

// NullTest is the noise-aware p-value of a private Hosmer–Lemeshow
// statistic (NullTest).
type NullTest struct {
	// PValue is (1 + #{H* ≥ H}) / (1 + Draws), the parametric bootstrap
	// p-value of the observed private H under H₀.
	PValue float64
	// StdErr is its Monte-Carlo standard error √(p(1−p)/Draws).
	StdErr float64
	// Draws is B, the number of simulated null data sets.
	Draws int
	// Undefined counts the draws whose H* was undefined (ErrUndefined);
	// they count as H* ≥ H, which can only raise the p-value.
	Undefined int
}

// NullTest returns the noise-aware p-value of res, the result of
// Evaluate on the plan's releases rels with grid g, smoothing method and
// cfg, by a parametric bootstrap under H₀ (the model is calibrated) over
// the public law of the release noise — post-processing only, no ε:
//
//  1. the per-bin counts c_i of B simulated data sets are those of the
//     released ECDF after post-processing (res.ECDF, made non-decreasing
//     in [0, 1], scaled to end at 1, times n, rounded at every prefix);
//  2. the positives of bin i are Binomial(c_i, m_i), with m_i the bin's
//     centre probability (BinCenters) when g lies within [0, 1], else the
//     expected positive rate E_1/size of the released group holding the
//     bin; a bin's Σp is c_i·m_i;
//  3. each component of each release gets fresh noise from its own
//     mechanism, one independent full-scale draw per server
//     (Release.Servers), exactly as the servers add it: the mechanism's
//     NewRelease with a fresh seed;
//  4. H* is computed by the same code as res (Evaluate: same plan,
//     smoothing, grouping from the simulated ECDF, clipping).
//
// The seeds of the simulated noise come from math/rand/v2's ChaCha8
// seeded by seed: the noise simulates a public law, so it needs no
// secret randomness, only exact samplers (those of package noise).
// Draws are spread over GOMAXPROCS goroutines; the result depends only
// on seed and draws.
func (p *Plan) NullTest(rels []*aggregation.Release, g *ecdf.Grid, method string, cfg Config, res *Result, draws int, seed uint64) (*NullTest, error) {
	if draws < 1 {
		return nil, fmt.Errorf("hosmer: %d bootstrap draws: want at least 1", draws)
	}
	if len(rels) != len(p.Releases) {
		return nil, fmt.Errorf("hosmer: the %s plan has %d release(s), got %d", p.Name, len(p.Releases), len(rels))
	}
	if res == nil || len(res.ECDF) != cfg.Bins || math.IsNaN(res.H) {
		return nil, errors.New("hosmer: the null test needs a private result with its ECDF and a finite H")
	}
	null := newNullModel(res, g, cfg)
	workers := min(runtime.GOMAXPROCS(0), draws)
	exceed, undefined := make([]int, workers), make([]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for b := w; b < draws; b += workers {
				h, err := null.draw(p, rels, g, method, cfg, seed, uint64(b))
				switch {
				case errors.Is(err, ErrUndefined):
					undefined[w]++
					exceed[w]++
				case err != nil:
					errs[w] = err
					return
				case h >= res.H:
					exceed[w]++
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("hosmer: null test: %w", err)
	}
	t := &NullTest{Draws: draws}
	for w := range workers {
		t.Undefined += undefined[w]
		t.PValue += float64(exceed[w])
	}
	t.PValue = (1 + t.PValue) / float64(1+draws)
	t.StdErr = math.Sqrt(t.PValue * (1 - t.PValue) / float64(draws))
	return t, nil
}

// nullModel is the calibrated population NullTest draws from: the
// prefix counts at every bin and each bin's probability.
type nullModel struct {
	prefix []int64   // C_i, C_N = n
	probs  []float64 // m_i
}

func newNullModel(res *Result, g *ecdf.Grid, cfg Config) *nullModel {
	n := cfg.Bins
	m := &nullModel{prefix: make([]int64, n), probs: make([]float64, n)}
	mono := make([]float64, n)
	run := 0.0
	for i, v := range res.ECDF {
		if !math.IsNaN(v) {
			run = max(run, min(max(v, 0), 1))
		}
		mono[i] = run
	}
	top := mono[n-1]
	for i := range mono {
		if top > 0 {
			m.prefix[i] = int64(math.Round(float64(cfg.Reports) * mono[i] / top))
		} else if i == n-1 {
			m.prefix[i] = int64(cfg.Reports)
		}
	}
	if g != nil && g.Len() == n && g.Min() >= 0 && g.Max() <= 1 {
		m.probs = BinCenters(g)
		return m
	}
	for _, gr := range res.Groups {
		rate := 0.5
		if gr.Size > 0 {
			rate = min(max(gr.Expected/gr.Size, 0), 1)
		}
		for i := gr.First; i <= gr.Last; i++ {
			m.probs[i-1] = rate
		}
	}
	return m
}

// draw simulates null data set b and returns its private H*.
func (m *nullModel) draw(p *Plan, rels []*aggregation.Release, g *ecdf.Grid, method string, cfg Config, seed, b uint64) (float64, error) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], seed)
	binary.LittleEndian.PutUint64(key[8:], b)
	copy(key[16:], "hosmer null test")
	rng := rand.New(rand.NewChaCha8(key))
	n := len(m.prefix)
	data := map[core.Component][]int64{}
	count, pos, prob := make([]int64, n), make([]int64, n), make([]int64, n)
	var c, y, e int64
	for i := range n {
		ci := m.prefix[i] - c
		if ci > 0 {
			y += int64(distuv.Binomial{N: float64(ci), P: m.probs[i], Src: rng}.Rand())
			e += ci * int64(math.Round(m.probs[i]*core.Probability.Scale()))
		}
		c += ci
		count[i], pos[i], prob[i] = c, y, e
	}
	neg := make([]int64, n)
	for i := range neg {
		neg[i] = count[i] - pos[i]
	}
	data[core.Count], data[core.Label], data[core.NotLabel], data[core.Probability] = count, pos, neg, prob
	src := nullSource{}
	for _, rel := range rels {
		for _, comp := range rel.Spec.Components {
			if _, done := src[comp]; done {
				continue
			}
			mech := rel.Mechanism(comp)
			v := make([]float64, n)
			draws := make([]interface{ PrefixNoise(int) int64 }, max(rel.Servers, 1))
			for s := range draws {
				var sd [32]byte
				for k := 0; k < 32; k += 8 {
					binary.LittleEndian.PutUint64(sd[k:], rng.Uint64())
				}
				draws[s] = mechanism.SimulatedRelease(mech, sd) // NewRelease's noise, without its fixed work
			}
			for i := range v {
				sum := data[comp][i]
				for _, d := range draws {
					sum += d.PrefixNoise(i + 1)
				}
				v[i] = float64(sum) / comp.Scale()
			}
			src[comp] = v
		}
	}
	res, err := p.evaluate(nullVarianceSource{src, rels}, rels, g, method, cfg)
	if err != nil {
		return 0, err
	}
	return res.H, nil
}

// nullSource holds the simulated released prefixes of every component
// at every bin.
type nullSource map[core.Component][]float64

// nullVarianceSource is a NoiseSource over a nullSource, with the
// releases' noise variances (for Config.Debias).
type nullVarianceSource struct {
	src  nullSource
	rels []*aggregation.Release
}

func (s nullVarianceSource) Prefixes(c core.Component, bins []int) ([]float64, error) {
	all, ok := s.src[c]
	if !ok {
		return nil, fmt.Errorf("no release covers payload component %v", c)
	}
	v := make([]float64, len(bins))
	for j, b := range bins {
		v[j] = all[b-1]
	}
	return v, nil
}

func (s nullVarianceSource) RangeVariance(c core.Component, from, to int) (float64, error) {
	for _, rel := range s.rels {
		if rel.Mechanism(c) != nil {
			return rel.RangeVariance(c, from, to), nil
		}
	}
	return 0, fmt.Errorf("no release covers payload component %v", c)
}
