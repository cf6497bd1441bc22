package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Kinds are the releases the form creates: what fedecdf query ecdf and
// query roc create. A ROC release also gives the Hosmer–Lemeshow test
// (grid plan) at no further cost.
var Kinds = []string{"ecdf", "roc"}

// ErrKind is returned for a release kind not in Kinds.
var ErrKind = errors.New("ui: unknown release kind (want ecdf or roc)")

// ErrNotViewable is returned for a release whose components are neither
// an ECDF's nor a ROC's (a hosmer joint or paper plan's).
var ErrNotViewable = errors.New("ui: this release is not an ECDF or a ROC release (fedecdf query hosmer --plan joint|paper made it): read it with fedecdf query")

// ErrNoRelease is returned for a release ID the servers do not list.
var ErrNoRelease = errors.New("ui: the servers list no such release")

// Options are the post-processing settings of the results, as the flags
// of fedecdf query set them.
type Options struct {
	// Smoothing is the smoothing method (ecdf/smooth) of every curve.
	Smoothing string
	// Quantiles are the probabilities whose quantiles an ECDF shows.
	Quantiles []float64
	// Groups and Bootstrap are the Hosmer–Lemeshow test's number of
	// groups and of null data sets for the noise-aware p-value.
	Groups, Bootstrap int
	// IntervalDraws is the number of Monte-Carlo draws behind the bands
	// and intervals (analyst.Analyst.SetIntervalDraws).
	IntervalDraws int
}

// Deployment is the analyst's client of a running deployment, under
// the analyst's key, which stays in this process.
type Deployment struct {
	m    *manifest.Manifest
	id   *manifest.Identity
	tc   p2p.Config
	a    *analyst.Analyst
	opts Options
}

// NewDeployment starts the analyst's client of manifest m under the
// analyst identity id (analyst.NewAnalyst), with transport settings tc.
func NewDeployment(m *manifest.Manifest, id *manifest.Identity, tc p2p.Config, opts Options) (*Deployment, error) {
	a, err := analyst.NewAnalyst(m, id, tc)
	if err != nil {
		return nil, err
	}
	a.SetIntervalDraws(opts.IntervalDraws)
	return &Deployment{m: m, id: id, tc: tc, a: a, opts: opts}, nil
}

// Close stops the client.
func (d *Deployment) Close() error { return d.a.Close() }

// Manifest returns the deployment's manifest.
func (d *Deployment) Manifest() *manifest.Manifest { return d.m }

// Status asks the leader how the deployment is (fedecdf status).
func (d *Deployment) Status(ctx context.Context) (*analyst.Status, error) {
	st, err := analyst.AskStatus(ctx, d.m, d.id, d.tc)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return st, nil
}

// Cost is what a new release of a kind charges each server's ledger.
type Cost struct {
	Kind, Mechanism string
	Components      []string
	Units           int
	Epsilon, Delta  float64
}

// Cost returns the exact cost of a new release of kind: the number of
// privacy units of its components (payload.PrivacyUnits) times the ε and
// δ of the mechanism the analyst's client asks for (the manifest's; for
// roc, analysis.ROCParams's choice), which is what aggregation.Release
// charges.
func (d *Deployment) Cost(kind string) (Cost, error) {
	comps, err := components(kind)
	if err != nil {
		return Cost{}, err
	}
	params, err := d.m.MechanismParams()
	if err != nil {
		return Cost{}, err
	}
	if kind == "roc" {
		policy, err := d.m.Policy()
		if err != nil {
			return Cost{}, err
		}
		params = analysis.ROCParams(params, policy.Allow)
	}
	units, err := payload.PrivacyUnits(comps)
	if err != nil {
		return Cost{}, err
	}
	c := Cost{Kind: kind, Mechanism: params.Name, Units: units, Epsilon: float64(units) * params.Epsilon, Delta: float64(units) * params.Delta}
	for _, x := range comps {
		c.Components = append(c.Components, x.String())
	}
	return c, nil
}

// components are the components of a release of kind.
func components(kind string) ([]core.Component, error) {
	switch kind {
	case "ecdf":
		return []core.Component{core.Count}, nil
	case "roc":
		return []core.Component{core.Label, core.NotLabel}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrKind, kind)
}

// Create creates a new release of kind, as fedecdf query ecdf or query
// roc does (charging its Cost at both servers), and returns its results.
func (d *Deployment) Create(ctx context.Context, kind string) (*Results, error) {
	switch kind {
	case "ecdf":
		e, err := d.a.ECDF(ctx)
		if err != nil {
			return nil, err
		}
		return d.ecdfResults(e)
	case "roc":
		r, err := d.a.ROC(ctx, d.opts.Smoothing)
		if err != nil {
			return nil, err
		}
		return d.rocResults(ctx, r), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrKind, kind)
}

// Read re-reads release id at no cost (fedecdf query --release), its
// kind told by the components the servers recorded for it in st.
func (d *Deployment) Read(ctx context.Context, st *analyst.Status, id string) (*Results, error) {
	rid, err := analyst.ParseReleaseID(id)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRelease, err)
	}
	var comps []string
	for _, sv := range st.Servers {
		for _, r := range sv.Releases {
			if r.Release == id {
				comps = r.Components
			}
		}
	}
	switch {
	case comps == nil:
		return nil, fmt.Errorf("%w: %s", ErrNoRelease, id)
	case slices.Equal(comps, []string{"count"}):
		e, err := d.a.ReadRelease(ctx, rid)
		if err != nil {
			return nil, err
		}
		return d.ecdfResults(e)
	case slices.Equal(comps, []string{"label", "notlabel"}):
		r, err := d.a.ROCRelease(ctx, rid, d.opts.Smoothing)
		if err != nil {
			return nil, err
		}
		return d.rocResults(ctx, r), nil
	}
	return nil, fmt.Errorf("%w (components %s)", ErrNotViewable, strings.Join(comps, "+"))
}

// ecdfResults smooths e and reads its quantiles, as fedecdf query ecdf.
func (d *Deployment) ecdfResults(e *analyst.ECDF) (*Results, error) {
	if err := e.Smooth(d.opts.Smoothing, d.opts.Quantiles); err != nil {
		return nil, err
	}
	return &Results{Dataset: e.Dataset, Release: e.Release, ECDF: e.ECDF, ecdfJSON: e}, nil
}

// rocResults adds to the ROC release r its Hosmer–Lemeshow test, free
// (fedecdf query --release ID hosmer); an error of the test (e.g. under
// add/remove neighbours) is kept to be shown with the results.
func (d *Deployment) rocResults(ctx context.Context, r *analyst.ROC) *Results {
	res := &Results{Dataset: r.Dataset, Release: r.Release, ROC: r.ROC, rocJSON: r}
	id, err := analyst.ParseReleaseID(r.Release)
	if err == nil {
		var h *analyst.Hosmer
		if h, err = d.a.HosmerRelease(ctx, id, d.opts.Smoothing, d.opts.Groups, d.opts.Bootstrap); err == nil {
			res.Hosmer, res.hosmerJSON = &h.Hosmer, h
		}
	}
	if err != nil {
		res.HosmerError = err.Error()
	}
	return res
}
