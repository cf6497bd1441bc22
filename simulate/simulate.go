package simulate

// The run: the data, the parties, the releases and their answers (Run),
// and the report comparing them with the truth.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/testbed"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// Report is the outcome of one simulation. Its JSON form is the output of
// `fedecdf simulate --format json` (docs/json.md).
type Report struct {
	// Parties is the number of parties: the simulation's ground truth,
	// like True.
	Parties int `json:"parties"`
	// Normaliser is n as the analyst knows it and divides the ECDF by:
	// the number of parties under replace-one, where it is public; the
	// released noisy total under add/remove (JSON keys n, n_public,
	// n_note).
	ecdf.Normaliser
	Data      *Data   `json:"data"`
	Backend   string  `json:"backend"`
	Mechanism string  `json:"mechanism"`
	Epsilon   float64 `json:"epsilon"`
	Budget    Budget  `json:"budget"`
	// Delta is the δ of one release per privacy unit (Config.Delta), not
	// the run's total: that is Budget.Delta.
	Delta      float64 `json:"delta"`
	Neighbours string  `json:"neighbours"`
	Guarantee  string  `json:"guarantee"`
	Bins       int     `json:"bins"`
	// ECDF and ROC are the analyst's results, as fedecdf ecdf and
	// fedecdf query print them (ECDF nil in a ROC-only run, ECDFShare
	// 0); True the exact ones they are compared with, and Error the
	// comparison.
	ECDF  *analysis.ECDF `json:"ecdf"`
	ROC   *analysis.ROC  `json:"roc"`
	True  Truth          `json:"true"`
	Error Errors         `json:"error"`
	// Hosmer is the Hosmer–Lemeshow test; nil when not computed (Notes
	// says why).
	Hosmer *HosmerReport `json:"hosmer,omitempty"`
	// Notes are remarks on what was not computed, and why.
	Notes []string `json:"notes,omitempty"`
	// Verified tells whether the servers verified every report (the
	// additive and the dcf backend, unless Config.Unverified).
	Verified bool `json:"verified"`
	// Rejected counts the reports both servers rejected, per reason
	// (internal/verify.Reason: malformed, mismatch, proof, replay), for
	// the verified backends (nil for the others); its counts add up to
	// Config.Malicious.
	Rejected map[string]int `json:"rejected"`
	Cost     Cost           `json:"cost"`
}

// Truth holds the exact results at the queried thresholds.
type Truth struct {
	ECDF []float64      `json:"ecdf"`
	ROC  analysis.Curve `json:"roc"`
	// AUCUnbinned is the AUC of the unbinned scores (Mann–Whitney).
	AUCUnbinned float64 `json:"auc_unbinned"`
}

// Budget says how the total ε was split: each entry is the ε of one
// release, and they add up to the total (basic composition).
type Budget struct {
	ECDF float64 `json:"ecdf"`
	// ROC is the ε of the positives and negatives vectors together
	// (one release of the pair at spec ε ROC, which is ROC-DP: payload.
	// PrivacyUnits); the PR curve is post-processing of the same release.
	ROC float64 `json:"roc_pr"`
	// Hosmer is the proved ε of the Hosmer–Lemeshow releases, all
	// allocations together (0 when not computed).
	Hosmer float64 `json:"hosmer"`
	// Delta is the δ the run spends in all: Config.Delta is per release
	// and privacy unit, so it is the sum of the releases' δ (cascade:
	// the ECDF's and the ROC/PR release's, 2·Config.Delta), whereas
	// Config.Epsilon is already the total.
	Delta      float64  `json:"delta"`
	Guarantees []string `json:"guarantees"`
}

// Errors compares the private curves with the true one.
type Errors struct {
	MaxAbs         float64 `json:"max_abs"`
	RMSE           float64 `json:"rmse"`
	SmoothedMaxAbs float64 `json:"smoothed_max_abs"`
	SmoothedRMSE   float64 `json:"smoothed_rmse"`
	// ROCArea is ∫|TPR_true − TPR_private| dFPR, the area between the
	// true and the smoothed private ROC curve (dp-ecdf §6.5), or the raw
	// one under smoothing none, measured along its polyline where it
	// crosses itself (analysis.ROC.AreaError).
	ROCArea float64 `json:"roc_area"`
	// ROCAreaUnbinned is the area between the exact unbinned ROC curve
	// (every distinct score a threshold, analysis.UnbinnedROC) and the
	// private estimate of it, analysis.ROC.Interpolated: the measure of
	// EXPERIMENTS.md, "Private ROC curves".
	ROCAreaUnbinned float64 `json:"roc_area_unbinned"`
}

// Run performs the simulation in four steps: the data, the parties
// holding it (uploaded to the servers), the releases and their answers,
// and the report comparing them with the truth. It leaves the process's
// memory policy alone: a program that wants one drives it from the
// phases Config.Progress sees start (as `fedecdf simulate` does).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	var data *Data
	if cfg.Bins == 0 { // the number of parties decides: read the data first
		var err error
		if data, err = LoadData(cfg); err != nil {
			return nil, err
		}
		cfg.Bins = analysis.ROCBins(len(data.Scores), rocSpec(cfg).Mechanism.Epsilon, cfg.Neighbours)
	}
	r, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	r.data = data
	if cfg.Backend == string(server.DCF) {
		r.aesNs = aesNsPerBlock()
	}
	if err := r.readData(); err != nil {
		return nil, err
	}
	if err := r.startParties(ctx); err != nil {
		return nil, err
	}
	if r.aesNs > 0 {
		r.aesNs = (r.aesNs + aesNsPerBlock()) / 2
	}
	if err := r.release(ctx); err != nil {
		return nil, err
	}
	return r.report(ctx)
}

// run is one simulation as it goes through the steps of Run.
type run struct {
	cfg Config
	ph  *phases
	g   *ecdf.Grid
	// plans are the Hosmer–Lemeshow allocations with releases of their
	// own; fromROC says whether the test also runs on the ROC release.
	plans   []*hosmer.Plan
	fromROC bool
	budget  ledger.Budget
	data    *Data
	notes   []string
	parties []*party.Party
	local   *testbed.Deployment
	// ecdfRel and rocRel are the ECDF and ROC/PR releases; counts,
	// positives and negatives their answers at the queried prefixes.
	ecdfRel, rocRel              *aggregation.Release
	counts, positives, negatives *aggregation.Result
	// aesNs is the time per AES block of the dcf backend's bound (0:
	// another backend).
	aesNs float64
}

// newRun checks cfg and derives from it the Hosmer–Lemeshow plans, the
// budget and the grid, before any work.
func newRun(cfg Config) (*run, error) {
	if !(cfg.ECDFShare >= 0 && cfg.ECDFShare < 1) {
		return nil, fmt.Errorf("ECDF share %g of ε is not in [0, 1)", cfg.ECDFShare)
	}
	if !(cfg.HosmerShare >= 0 && cfg.ECDFShare+cfg.HosmerShare < 1) {
		return nil, fmt.Errorf("Hosmer–Lemeshow share %g of ε is negative or leaves nothing for ROC/PR after the ECDF share %g", cfg.HosmerShare, cfg.ECDFShare)
	}
	if err := CheckVerification(cfg); err != nil {
		return nil, err
	}
	r := &run{ph: &phases{progress: cfg.Progress, seconds: map[string]float64{}, cpu: map[string]float64{}}}
	var err error
	if r.plans, r.fromROC, err = hosmerPlans(cfg); err != nil {
		return nil, err
	}
	if cfg.Backend == string(server.Additive) {
		if err := withoutProbability(cfg.Backend, r.plans); err != nil {
			return nil, err
		}
	}
	if r.budget, err = budgetOf(cfg, r.plans); err != nil {
		return nil, err
	}
	if cfg.Smoothing, err = analysis.CheckSmoothing(cfg.Smoothing, cfg.Prefixes, cfg.Bins); err != nil {
		return nil, err
	}
	if r.g, err = ecdf.NewLinearGrid(cfg.Min, cfg.Max, cfg.Bins); err != nil {
		return nil, err
	}
	r.cfg = cfg
	return r, nil
}

// readData loads the data. Scores that are not probabilities rule the
// Hosmer–Lemeshow test out: an error when a plan spends ε on it, a note
// when it would only have post-processed the ROC release.
func (r *run) readData() error {
	if r.data == nil {
		r.ph.begin("data", -1)
		data, err := LoadData(r.cfg)
		r.ph.end()
		if err != nil {
			return err
		}
		r.data = data
	}
	if r.data.Probabilities {
		return nil
	}
	if len(r.plans) > 0 {
		return fmt.Errorf("Hosmer–Lemeshow needs predicted probabilities on a grid within [0, 1] (grid [%g, %g]); set its share to 0", r.cfg.Min, r.cfg.Max)
	}
	if r.fromROC {
		r.fromROC = false
		r.notes = append(r.notes, fmt.Sprintf("Hosmer–Lemeshow not computed: the scores are not predicted probabilities on a grid within [0, 1] (grid [%g, %g])", r.cfg.Min, r.cfg.Max))
	}
	return nil
}

// startParties gives each record to a party and uploads the parties'
// reports to in-process servers.
func (r *run) startParties(ctx context.Context) error {
	r.ph.begin("setup", len(r.data.Scores))
	parties, err := newParties(r.data, r.g, r.ph)
	r.ph.end()
	if err != nil {
		return err
	}
	r.parties = parties
	r.ph.begin("upload", -1)
	defer r.ph.end()
	r.local, err = testbed.New(ctx, testbed.Config{
		Backend: r.cfg.Backend, Dataset: "simulation", Bins: r.cfg.Bins,
		Budget: r.budget, MinReports: 1, Policy: server.Policy{Relation: r.cfg.Neighbours, MaxDelta: r.cfg.Delta},
		Unverified: r.cfg.Unverified, Probability: collectsProbability(r.plans), Malicious: r.cfg.Malicious, Rand: rand.New(rand.NewPCG(r.cfg.Seed, 17)),
	}, parties)
	if err == nil && r.cfg.Backend == string(server.DCF) {
		r.ph.servers = r.serversCPU
	}
	return err
}

// serversCPU is the CPU both servers have spent walking DCF keys.
func (r *run) serversCPU() (time.Duration, bool) {
	leader, okL := r.local.Leader.KeyWalkCPU()
	helper, okH := r.local.Helper.KeyWalkCPU()
	return leader + helper, okL && okH
}

// release makes the ECDF (unless its share is 0) and the ROC/PR
// releases and queries them.
func (r *run) release(ctx context.Context) error {
	r.ph.begin("release", -1)
	var err error
	if r.cfg.ECDFShare > 0 {
		r.ecdfRel, err = r.local.NewRelease(ctx, ecdfSpec(r.cfg))
	}
	if err == nil {
		r.rocRel, err = r.local.NewRelease(ctx, rocSpec(r.cfg))
	}
	r.ph.end()
	if err != nil {
		return err
	}
	return r.query(ctx)
}

// query asks for the released counts, positives and negatives at the
// evenly spaced prefixes.
func (r *run) query(ctx context.Context) error {
	r.ph.begin("query", 3)
	defer r.ph.end()
	prefixes := evenlySpaced(r.cfg.Bins, r.cfg.Prefixes)
	for _, q := range []struct {
		dst *(*aggregation.Result)
		rel *aggregation.Release
		c   core.Component
	}{
		{&r.counts, r.ecdfRel, core.Count},
		{&r.positives, r.rocRel, core.Label},
		{&r.negatives, r.rocRel, core.NotLabel},
	} {
		if q.rel == nil {
			r.ph.add(1)
			continue
		}
		res, err := r.local.Sum(ctx, aggregation.Query{Release: q.rel, Component: q.c, Prefixes: prefixes})
		if err != nil {
			return err
		}
		*q.dst = res
		r.ph.add(1)
	}
	return nil
}

// report compares the answers with the truth: the ECDF, the ROC and PR
// curves, and the budget with the Hosmer–Lemeshow test.
func (r *run) report(ctx context.Context) (*Report, error) {
	rep := newReport(r.cfg, r.local, r.parties, r.ph)
	var err error
	if rep.Rejected, err = r.local.Rejected(); err != nil {
		return nil, err
	}
	if r.aesNs > 0 {
		if rep.Cost.AESBound, err = newAESBound(r.aesNs, len(r.parties), r.cfg.Bins); err != nil {
			return nil, err
		}
		rep.Cost.AESBound.compare(r.ph.cpu, rep.Cost.ServersCPUSeconds)
	}
	rep.Data, rep.Notes = r.data, r.notes
	if r.counts != nil {
		if err := reportECDF(rep, r.cfg, r.g, r.counts, r.parties); err != nil {
			return nil, err
		}
	}
	if err := r.reportROC(rep); err != nil {
		return nil, err
	}
	if rep.ECDF == nil {
		rep.Normaliser, rep.Mechanism, rep.Delta, rep.Neighbours = rep.ROC.Normaliser, rep.ROC.Mechanism, rep.ROC.Delta, rep.ROC.Neighbours
	}
	if err := r.reportBudget(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// reportROC builds the private ROC and PR curves and compares them with
// the true ones.
func (r *run) reportROC(rep *Report) error {
	var err error
	if rep.ROC, err = analysis.NewROC(r.positives, r.negatives, r.cfg.Smoothing, intervalDraws(r.cfg)); err != nil {
		return err
	}
	rep.ROC.SetThresholds(r.g)
	for _, n := range rep.ROC.Notes {
		rep.Notes = append(rep.Notes, "ROC/PR: "+n)
	}
	if rep.True.ROC, err = trueROC(r.parties, r.cfg.Bins, r.positives.Prefixes); err != nil {
		return err
	}
	if rep.Error.ROCArea, err = rep.ROC.AreaError(rep.True.ROC); err != nil {
		return err
	}
	n := len(r.parties)
	unbinned, err := analysis.UnbinnedROC(r.data.Scores[:n], r.data.Labels[:n])
	if err != nil {
		return err
	}
	if rep.Error.ROCAreaUnbinned, err = rep.ROC.Interpolated.AreaError(unbinned); err != nil {
		return err
	}
	rep.True.AUCUnbinned, err = dataset.AUC(r.data.Scores[:n], r.data.Labels[:n])
	return err
}

// reportBudget fills in how the releases spent ε and δ, running the
// Hosmer–Lemeshow test (which may make releases of its own) on the way.
func (r *run) reportBudget(ctx context.Context, rep *Report) error {
	rep.Budget = Budget{ROC: r.rocRel.Epsilon(), Guarantees: []string{"ROC/PR: " + rep.ROC.Guarantee}}
	delta := r.rocRel.Delta()
	deltas := []string{fmt.Sprintf("ROC/PR %.6g", r.rocRel.Delta())}
	if r.ecdfRel != nil {
		rep.Budget.ECDF, delta = r.ecdfRel.Epsilon(), delta+r.ecdfRel.Delta()
		rep.Budget.Guarantees = append([]string{"ECDF: " + rep.ECDF.Guarantee}, rep.Budget.Guarantees...)
		deltas = append([]string{fmt.Sprintf("ECDF %.6g", r.ecdfRel.Delta())}, deltas...)
	}
	var err error
	if rep.Hosmer, err = r.hosmer(ctx, rep.ROC.Normaliser); err != nil {
		return err
	}
	if rep.Hosmer != nil {
		for _, a := range rep.Hosmer.Allocations {
			rep.Budget.Hosmer += a.Epsilon
			delta += a.Delta
			if a.Delta > 0 {
				deltas = append(deltas, fmt.Sprintf("Hosmer–Lemeshow %s %.6g", a.Plan, a.Delta))
			}
			rep.Budget.Guarantees = append(rep.Budget.Guarantees, "Hosmer–Lemeshow, "+a.describe())
		}
	}
	rep.Epsilon = rep.Budget.ECDF + rep.Budget.ROC + rep.Budget.Hosmer
	rep.Budget.Delta = delta
	rep.Guarantee = fmt.Sprintf("(ε=%.6g, δ=%.6g)-DP in all under %s neighbours: ECDF ε=%.6g, ROC/PR ε=%.6g, Hosmer–Lemeshow ε=%.6g (basic composition)", rep.Epsilon, delta, rep.Neighbours, rep.Budget.ECDF, rep.Budget.ROC, rep.Budget.Hosmer)
	if delta > 0 {
		// --epsilon is a total, --delta is per release and privacy unit:
		// say where the total δ comes from.
		rep.Guarantee += fmt.Sprintf("; δ spent in all %.6g = %s (--delta %.6g is per release and privacy unit, not a total)", delta, strings.Join(deltas, " + "), r.cfg.Delta)
	}
	return nil
}

// hosmer runs the Hosmer–Lemeshow allocations, or returns nil when there
// are none. rocTotal is the ROC release's normaliser.
func (r *run) hosmer(ctx context.Context, rocTotal ecdf.Normaliser) (*HosmerReport, error) {
	if len(r.plans) == 0 && !r.fromROC {
		return nil, nil
	}
	r.ph.begin("hosmer", -1)
	defer r.ph.end()
	var fromROC *aggregation.Release
	if r.fromROC {
		fromROC = r.rocRel
	}
	return hosmerReport(ctx, r.local, r.g, r.plans, fromROC, r.cfg.Smoothing, r.parties, r.data.Scores, rocTotal, analysis.NewBootstrap(r.cfg.Bootstrap, r.cfg.Seed))
}

// params are the mechanism parameters of a release at ε under cfg.
func params(cfg Config, epsilon float64) mechanism.Params {
	return mechanism.Params{Name: cfg.Mechanism, Bins: cfg.Bins, Epsilon: epsilon, Delta: cfg.Delta, Relation: cfg.Neighbours}
}

// ecdfSpec is the release of the scores' ECDF: the Count component at
// cfg.ECDFShare of ε.
func ecdfSpec(cfg Config) aggregation.ReleaseSpec {
	return aggregation.ReleaseSpec{Mechanism: params(cfg, cfg.Epsilon*cfg.ECDFShare), Components: []core.Component{core.Count}}
}

// rocSpec is the ROC/PR release: the {Label, NotLabel} pair at what the
// ECDF and the Hosmer–Lemeshow allocations leave of ε, with mechanism
// cfg.ROCMechanism (cfg.Mechanism if empty), "auto" resolved by
// analysis.ROCParams.
func rocSpec(cfg Config) aggregation.ReleaseSpec {
	eps := cfg.Epsilon - cfg.Epsilon*cfg.ECDFShare - cfg.Epsilon*cfg.HosmerShare
	p := params(cfg, eps)
	if cfg.ROCMechanism != "" {
		p.Name = cfg.ROCMechanism
	}
	return aggregation.ReleaseSpec{Mechanism: analysis.ROCParams(p, nil), Components: []core.Component{core.Label, core.NotLabel}}
}

// budgetOf is the dataset's budget: ε, and δ once per privacy unit of the
// ECDF, ROC/PR and plans' releases (what the ledgers charge), with a
// slack that absorbs rounding in ε_ECDF + ε_ROC + ε_HL = ε. It builds
// every component's mechanism first, so that bad mechanism parameters
// are refused before any work.
func budgetOf(cfg Config, plans []*hosmer.Plan) (ledger.Budget, error) {
	specs := []aggregation.ReleaseSpec{rocSpec(cfg)}
	if cfg.ECDFShare > 0 {
		specs = append(specs, ecdfSpec(cfg))
	}
	for _, p := range plans {
		specs = append(specs, p.Releases...)
	}
	var delta float64
	for _, spec := range specs {
		for _, c := range spec.Components {
			if _, err := payload.ComponentMechanism(spec.Mechanism, c); err != nil {
				return ledger.Budget{}, fmt.Errorf("mechanism %q: %w", spec.Mechanism.Name, err)
			}
		}
		units, err := payload.PrivacyUnits(spec.Components)
		if err != nil {
			return ledger.Budget{}, err
		}
		delta += float64(units) * spec.Mechanism.Delta
	}
	return ledger.Budget{Epsilon: cfg.Epsilon * (1 + 1e-12), Delta: delta * (1 + 1e-12)}, nil
}

// newParties gives each instance of d to a party on grid g.
func newParties(d *Data, g *ecdf.Grid, ph *phases) ([]*party.Party, error) {
	parties := make([]*party.Party, len(d.Scores))
	for k := range parties {
		inst := party.Instance{Score: d.Scores[k], Label: d.Labels[k]}
		if d.Probabilities {
			inst.Probability, inst.HasProbability = d.Scores[k], true
		}
		var err error
		if parties[k], err = party.New(inst, g); err != nil {
			return nil, fmt.Errorf("instance %d: %w", k+1, err)
		}
		if k%1024 == 1023 {
			ph.add(1024)
		}
	}
	ph.add(len(parties) % 1024)
	return parties, nil
}

// newReport starts the report of a run: the setting and its cost.
func newReport(cfg Config, l *testbed.Deployment, parties []*party.Party, ph *phases) *Report {
	c := l.Cost()
	r := &Report{
		Parties: len(parties), Backend: l.Backend(), Bins: cfg.Bins, Verified: verified(cfg),
		Cost: Cost{
			VerifyBytes:    c.VerifyBytes,
			BytesPerParty:  c.BytesPerParty,
			BytesPerServer: map[string]int64{"leader": c.LeaderBytes, "helper": c.HelperBytes},
			BytesTotal:     c.TotalBytesSent,
			Rounds:         Rounds{PerParty: c.PartyRounds, Analyst: c.AnalystRounds, Servers: c.ServerRounds},
			Seconds:        ph.seconds,
			CPUSeconds:     ph.cpu,
		},
	}
	if !ph.serversUnknown {
		r.Cost.ServersCPUSeconds = ph.serversCPU
	}
	return r
}

// reportECDF reports the ECDF answer res, whose last prefix is N
// (evenlySpaced), normalised as the analyst can, next to the truth.
func reportECDF(r *Report, cfg Config, g *ecdf.Grid, res *aggregation.Result, parties []*party.Party) error {
	e, err := analysis.NewECDF(res, g, intervalDraws(cfg))
	if err != nil {
		return err
	}
	if err := e.Smooth(cfg.Smoothing, nil); err != nil {
		return err
	}
	r.Normaliser, r.Mechanism, r.Delta, r.Neighbours, r.ECDF = e.Normaliser, e.Mechanism, e.Delta, e.Neighbours, e
	if e.Note != "" {
		r.Notes = append(r.Notes, "ECDF: "+e.Note)
	}
	bins := make([]int, len(parties))
	for k, p := range parties {
		bins[k] = p.Bin()
	}
	hist, _ := ecdf.Histogram(bins, cfg.Bins)
	exact := ecdf.ECDF(hist)
	for _, i := range res.Prefixes {
		r.True.ECDF = append(r.True.ECDF, exact[i-1])
	}
	r.Error.MaxAbs, r.Error.RMSE = compare(e.Raw, r.True.ECDF)
	r.Error.SmoothedMaxAbs, r.Error.SmoothedRMSE = compare(e.Smoothed, r.True.ECDF)
	return nil
}

// intervalDraws is the number of interval draws cfg asks for
// (Config.IntervalDraws).
func intervalDraws(cfg Config) int {
	switch {
	case cfg.IntervalDraws == 0:
		return analysis.DefaultIntervalDraws
	case cfg.IntervalDraws < 0:
		return 0
	}
	return cfg.IntervalDraws
}

// evenlySpaced returns k prefixes spread evenly over 1..n, ending at n
// (all of them when k is 0 or at least n).
func evenlySpaced(n, k int) []int {
	if k <= 0 || k >= n {
		k = n
	}
	p := make([]int, k)
	for j := range p {
		p[j] = int(math.Round(float64(j+1) * float64(n) / float64(k)))
	}
	return slices.Compact(p)
}

func compare(f, truth []float64) (maxAbs, rmse float64) {
	for j := range f {
		d := math.Abs(f[j] - truth[j])
		maxAbs = math.Max(maxAbs, d)
		rmse += d * d
	}
	return maxAbs, math.Sqrt(rmse / float64(len(f)))
}
