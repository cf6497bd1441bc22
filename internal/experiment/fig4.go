package experiment

import (
	"context"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/smooth"
	"github.com/fedecdf/fedecdf/internal/synthetic"
)

// Fig4 reproduces dp-ecdf Fig. 4 on X_pois(λ) (§6.4): for each ε and
// mechanism, the mean over runs of
//
//   - the ECDF's mean squared error (1/N) Σ_i (F(τ_i) − F̂(τ_i))², next to
//     its exact expectation MeanVariance/n² for the tree (dashed);
//   - the inverse ECDF's mean squared error E_p[(F⁻¹(p) − F̂⁻¹(p))²] over
//     uniform p, with F̂⁻¹ found by Algorithm 1 on the raw F̂, and the
//     domain [0, N] rescaled to [0, 1] so that both errors are on the same
//     scale (the paper finds them "of the same order of magnitude");
//   - the same for the inverse of the smoothed F́ (pointwise l2, PAVA),
//     the paper's third curve.
func Fig4(ctx context.Context, cfg Config) (*Figure, error) {
	cfg = cfg.withDefaults()
	hist, err := synthetic.PoissonHistogram(cfg.Lambda, cfg.Bins, cfg.Seed)
	if err != nil {
		return nil, err
	}
	exact := ecdf.ECDF(hist)
	var n int64
	for _, h := range hist {
		n += h
	}
	names, notes, err := mechanisms(cfg)
	if err != nil {
		return nil, err
	}
	fig := &Figure{Notes: notes, ID: "fig4", Title: "ECDF and inverse ECDF error on X_pois(λ)", XLabel: "ε", YLabel: "mean squared error", LogX: true, LogY: true, Runs: cfg.Runs}
	rng := rand.New(rand.NewPCG(cfg.Seed, 4))
	pr := progress{cfg.Progress}
	pr.start("fig4", len(names)*len(cfg.Epsilons)*cfg.Runs)
	defer pr.finish()
	for _, name := range names {
		var fwd, inv, invSmooth, theory Series
		for _, eps := range cfg.Epsilons {
			m, err := newMechanism(name, cfg.Bins, eps, cfg.Delta)
			if err != nil {
				return nil, err
			}
			var fm, im, sm meanSE
			for range cfg.Runs {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := release(m, hist)
				if err != nil {
					return nil, err
				}
				f := p.Curve()
				fm.add(meanSquaredDiff(f, exact))
				im.add(inverseMSE(f, exact, cfg.Quantiles, rng))
				sm.add(inverseMSE(smooth.PointwiseL2(f), exact, cfg.Quantiles, rng))
				pr.add()
			}
			label := seriesName(name, m)
			fwd.Name, inv.Name, invSmooth.Name, theory.Name = "ECDF "+label, "inverse "+label, "inverse smoothed "+label, "ECDF "+label+" theory"
			fwd.X, inv.X, invSmooth.X, theory.X = append(fwd.X, eps), append(inv.X, eps), append(invSmooth.X, eps), append(theory.X, eps)
			invSmooth.Y, invSmooth.StdErr = append(invSmooth.Y, sm.mean()), append(invSmooth.StdErr, sm.stderr())
			fwd.Y, fwd.StdErr = append(fwd.Y, fm.mean()), append(fwd.StdErr, fm.stderr())
			inv.Y, inv.StdErr = append(inv.Y, im.mean()), append(inv.StdErr, im.stderr())
			theory.Y = append(theory.Y, m.MeanVariance()/float64(n)/float64(n))
		}
		fig.Series = append(fig.Series, fwd, inv, invSmooth)
		if name == "tree" {
			theory.Dashed = true
			fig.Series = append(fig.Series, theory)
		}
	}
	return fig, nil
}

// meanSquaredDiff is (1/N) Σ (f_i − g_i)².
func meanSquaredDiff(f, g []float64) float64 {
	var s float64
	for i := range f {
		d := f[i] - g[i]
		s += d * d
	}
	return s / float64(len(f))
}

// inverseMSE is the mean over k uniform p of ((i(p) − î(p))/N)², where
// i and î are Algorithm 1's answers on the exact and the private curve.
func inverseMSE(private, exact []float64, k int, rng *rand.Rand) float64 {
	n := len(exact)
	var s float64
	for range k {
		p := rng.Float64()
		i, _ := ecdf.QuantileIndex(ecdf.CurveAt(exact), n, p)
		j, _ := ecdf.QuantileIndex(ecdf.CurveAt(private), n, p)
		d := float64(i-j) / float64(n)
		s += d * d
	}
	return s / float64(k)
}
