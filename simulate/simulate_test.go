package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/verify"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// TestRunExactWithoutNoise: at ε = 2^48 the private ECDF of every backend
// is the true one, and the report carries the documented JSON keys (the
// additive backend: TestRunAdditiveWithMaliciousParties).
func TestRunExactWithoutNoise(t *testing.T) {
	for _, tc := range []struct {
		backend    string
		unverified bool
	}{{"plain", false}, {"dcf", true}, {"dcf", false}} {
		// The joint and paper allocations release the probability, which
		// DCF reports carry, verified or not.
		backend := tc.backend // in messages
		if tc.unverified {
			backend += " (unverified)"
		}
		cfg := Config{Parties: 200, Backend: tc.backend, Unverified: tc.unverified, Epsilon: 1 << 48, ECDFShare: 0.25, HosmerShare: 0.25, HosmerPlans: []string{"roc", "joint", "paper"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Seed: 5}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		if len(r.ECDF.Raw) != 16 || r.True.ECDF[15] != 1 || r.Error.MaxAbs != 0 {
			t.Errorf("%s: %d values, F(max) = %g, max error %g", backend, len(r.ECDF.Raw), r.True.ECDF[15], r.Error.MaxAbs)
		}
		if !slices.Equal(r.ROC.Raw.FPR, r.True.ROC.FPR) || !slices.Equal(r.ROC.Raw.TPR, r.True.ROC.TPR) || r.ROC.Raw.AUC != r.True.ROC.AUC || r.Error.ROCArea > 1e-12 {
			t.Errorf("%s: private ROC (AUC %g, area error %g) is not the true one (AUC %g)", backend, r.ROC.Raw.AUC, r.Error.ROCArea, r.True.ROC.AUC)
		}
		// Binning at 16 bins only adds ties: the binned AUC is within
		// the mass of the tied pairs of the exact one; 0.05 is loose.
		if math.Abs(r.True.ROC.AUC-r.True.AUCUnbinned) > 0.05 || len(r.ROC.FPR) != 17 {
			t.Errorf("%s: binned AUC %g vs exact %g, %d ROC points", backend, r.True.ROC.AUC, r.True.AUCUnbinned, len(r.ROC.FPR))
		}
		// Without noise the joint and paper allocations give the textbook
		// statistic, up to the parties' 2^-32 fixed point of p (relative
		// 1e-6 is loose); the roc allocation's groups have the true sizes
		// and positives, and E_1 within half a bin width per instance.
		h := r.Hosmer
		if h == nil || len(h.Allocations) != 3 || h.Allocations[0].Plan != "roc" || h.Allocations[1].Plan != "joint" || h.Allocations[2].Plan != "paper" {
			t.Fatalf("%s: Hosmer–Lemeshow report %+v", backend, h)
		}
		if a := h.Allocations[0]; a.Epsilon != 0 || len(a.Groups) != len(h.True) {
			t.Errorf("%s: roc allocation ε %g, %d groups (true %d)", backend, a.Epsilon, len(a.Groups), len(h.True))
		} else {
			for k, g := range a.Groups {
				tg := h.True[k]
				if math.Abs(g.Size-tg.Size) > 1e-6 || math.Abs(g.Positives-tg.Positives) > 1e-6 || math.Abs(g.Expected-tg.Expected) > tg.Size/32+1e-6 {
					t.Errorf("%s: roc allocation group %d %+v, true %+v", backend, k+1, g, tg)
				}
			}
		}
		for _, a := range h.Allocations[1:] {
			if a.Statistic == nil || math.Abs(*a.Statistic-*h.StatisticTrue) > 1e-6**h.StatisticTrue || len(a.Groups) != len(h.True) {
				t.Errorf("%s: %s allocation H %v (%s), true %g", backend, a.Plan, a.Statistic, a.Error, *h.StatisticTrue)
			}
		}
		if math.Abs(r.Epsilon-cfg.Epsilon) > 1e-9*cfg.Epsilon || r.Budget.Hosmer != cfg.Epsilon/4 {
			t.Errorf("%s: spent ε = %g with %g on Hosmer–Lemeshow, want %g with a quarter", backend, r.Epsilon, r.Budget.Hosmer, cfg.Epsilon)
		}
		b, _ := json.Marshal(r)
		for _, key := range []string{`"n":200`, `"parties":200`, `"n_public":true`, `"neighbours":"replace"`, `"backend":"` + tc.backend, `"thresholds"`, `"smoothed"`, `"bytes_per_party"`, `"bytes_per_server"`, `"rounds"`, `"seconds"`, `"cpu_seconds"`, `"roc":{"n"`, `"fpr"`, `"tpr"`, `"auc"`, `"raw":{"fpr"`, `"roc_area"`, `"true":{"ecdf"`, `"recall"`, `"precision"`, `"budget"`, `"epsilon":`, `"bins":16`, `"mechanism":"tree"`, `"hosmer":{"groups":10`, `"statistic_true"`, `"statistic_private"`, `"p_value_true"`, `"p_value_private"`, `"allocations"`, `"plan":"paper"`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("%s: JSON lacks %s", backend, key)
			}
		}
		if tc.unverified || tc.backend == "plain" {
			checkAESBound(t, tc.backend, r) // verified dcf: runWithMalicious
		}
	}
}

// checkAESBound checks the dcf backend's AES bound: one full-domain walk
// (at 16 bins a depth-5 tree over 16 leaves, fss.BatchCost) of each of
// the 200 keys at both servers, at the measured time per block, against
// the CPU of the phases that evaluate keys; no bound for other backends.
func checkAESBound(t *testing.T, backend string, r *Report) {
	t.Helper()
	b := r.Cost.AESBound
	if (b != nil) != (backend == "dcf") {
		t.Fatalf("%s: AES bound %+v", backend, b)
	}
	if r.Cost.CPUSeconds["upload"] <= 0 {
		t.Errorf("%s: upload CPU %g s", backend, r.Cost.CPUSeconds["upload"])
	}
	if b == nil {
		return
	}
	points := make([]uint64, 16)
	for j := range points {
		points[j] = uint64(j)
	}
	_, blocks, _ := fss.BatchCost(5, payload.NumComponents, points)
	want := 2 * 200 * float64(blocks) * b.NsPerBlock / 1e9
	if b.BlocksPerKey != blocks || !(b.NsPerBlock > 0) || math.Abs(b.Seconds-want) > 1e-9*want || b.ProcessRatio != b.CPUSeconds/b.Seconds {
		t.Errorf("dcf: AES bound %+v, want %d blocks per key and %g s", b, blocks, want)
	}
	checkServersCPU(t, r)
}

// checkServersCPU checks the servers' part of the dcf backend's CPU: a
// positive part of each phase's process CPU where they walked keys, and
// the bound's ratio taken over it.
func checkServersCPU(t *testing.T, r *Report) {
	t.Helper()
	servers, b := r.Cost.ServersCPUSeconds, r.Cost.AESBound
	if servers == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("dcf: no servers' CPU on Linux, which has thread clocks")
		}
		return
	}
	for phase, cpu := range servers {
		if cpu < 0 || cpu > r.Cost.CPUSeconds[phase] {
			t.Errorf("dcf: servers' CPU %g s in phase %s, process CPU %g s", cpu, phase, r.Cost.CPUSeconds[phase])
		}
	}
	if servers["upload"]+servers["release"] <= 0 {
		t.Errorf("dcf: servers' CPU %v: no key walked", servers)
	}
	if b == nil {
		return
	}
	sum := servers["upload"] + servers["release"] + servers["query"]
	if math.Abs(b.ServersCPUSeconds-sum) > 1e-12 || math.Abs(b.OtherCPUSeconds-(b.CPUSeconds-sum)) > 1e-12 || b.Ratio != b.ServersCPUSeconds/b.Seconds {
		t.Errorf("dcf: AES bound %+v, servers' CPU per phase %v", b, servers)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, cfg := range []Config{
		{Parties: 10, Backend: "dcf", Epsilon: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 0.5, Seed: 1}, // scores above max
		{Parties: 10, Backend: "carrier-pigeon", Epsilon: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 0, Backend: "dcf", Epsilon: 1, ECDFShare: 0.5, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "dcf", Epsilon: 1, ECDFShare: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Smoothing: "l3"},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.5, HosmerPlans: []string{"joint"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.25, HosmerPlans: []string{"wishful"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.25, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.25, HosmerPlans: []string{"roc"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerPlans: []string{"grid"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Smoothing: "tree-l2", Prefixes: 8},
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, Mechanism: "cascade", Bins: 16, Min: 0, Max: 1},                                                                                  // δ = 0
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.25, HosmerPlans: []string{"paper"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Neighbours: mechanism.AddRemove}, // replace-one plan
		{Parties: 10, Backend: "plain", Epsilon: 1, ECDFShare: 0.5, HosmerShare: 0.25, HosmerPlans: []string{"joint"}, Mechanism: "tree", Delta: 1e-6, Bins: 16, Min: 0, Max: 1},                     // joint needs δ = 0
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestRunEpsilonOne: the default pipeline at ε = 1 completes, spends
// exactly ε in all (the Hosmer–Lemeshow test from the ROC release costs
// nothing more), keeps the private AUC within a plausible distance of the
// true one, and draws its plots.
func TestRunEpsilonOne(t *testing.T) {
	cfg := Config{Parties: 2000, Backend: "plain", Epsilon: 1, ECDFShare: 0.25, HosmerPlans: []string{"roc"}, Mechanism: "auto", Bins: 64, Min: 0, Max: 1, Seed: 7}
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Epsilon-1) > 1e-12 || r.Budget.ECDF != 0.25 || r.Budget.ROC != 0.75 || r.Budget.Hosmer != 0 {
		t.Errorf("spent ε = %g (ECDF %g, ROC %g, HL %g), want 1 = 0.25 + 0.75 + 0", r.Epsilon, r.Budget.ECDF, r.Budget.ROC, r.Budget.Hosmer)
	}
	if h := r.Hosmer; h == nil || len(h.Allocations) != 1 || h.Allocations[0].Plan != "roc" {
		t.Errorf("Hosmer–Lemeshow report %+v, want the roc allocation", h)
	}
	if r.Error.ROCArea <= 0 || r.Error.ROCArea > 0.5 || r.ROC.AUC <= 0.5 {
		t.Errorf("area error %g, smoothed AUC %g", r.Error.ROCArea, r.ROC.AUC)
	}
	paths, err := r.WritePlots(t.TempDir())
	if err != nil || len(paths) != 3 {
		t.Fatalf("plots %v: %v", paths, err)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 || filepath.Ext(p) != ".png" {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestRunSmoothingMethods: every smoothing method of smooth.Apply runs
// through the pipeline; all but none give non-decreasing curves in [0, 1]
// (ECDF and both ROC rates), and none leaves the private curve as it is.
func TestRunSmoothingMethods(t *testing.T) {
	for _, method := range []string{"none", "l1", "l2", "tree-l2"} {
		cfg := Config{Parties: 500, Backend: "plain", Epsilon: 0.5, ECDFShare: 0.5, Mechanism: "kary", Bins: 64, Min: 0, Max: 1, Seed: 3, Smoothing: method}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if method == "none" {
			if !slices.Equal(r.ECDF.Smoothed, r.ECDF.Raw) {
				t.Errorf("none changed the private curve")
			}
			continue
		}
		// The ECDF rises; the ROC rates fall with the threshold.
		for name, f := range map[string][]float64{"ECDF": r.ECDF.Smoothed, "1−FPR": complement(r.ROC.FPR), "1−TPR": complement(r.ROC.TPR)} {
			for j, v := range f {
				if v < 0 || v > 1 || (j > 0 && v < f[j-1]) {
					t.Fatalf("%s: smoothed %s at %d is %g after %g", method, name, j, v, f[max(j-1, 0)])
				}
			}
		}
		if !(r.Error.ROCArea >= 0 && r.Error.ROCArea <= 1) { // an area within the unit square
			t.Errorf("%s: area error %g", method, r.Error.ROCArea)
		}
		if !strings.Contains(analysis.Describe(r.ECDF.Smoothing), "Eq. 3") {
			t.Errorf("%s: smoothing described as %q", method, r.ECDF.Smoothing)
		}
	}
}

func complement(f []float64) []float64 {
	out := make([]float64, len(f))
	for j, v := range f {
		out[j] = 1 - v
	}
	return out
}

// TestRunAddRemove: under add/remove neighbours the analyst is not told n
// with any backend: the ECDF is normalised by its noisy total (exact at
// ε = 2^48, so the curve is the true one) and the report says n is not
// public; the Hosmer–Lemeshow test from the ROC release sizes its groups
// by the pair's noisy total and, without noise, finds the true groups.
func TestRunAddRemove(t *testing.T) {
	for _, backend := range []string{"plain", "dcf"} {
		cfg := Config{Parties: 200, Backend: backend, Epsilon: 1 << 48, ECDFShare: 0.25, HosmerPlans: []string{"roc"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Seed: 5, Neighbours: mechanism.AddRemove}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		if r.Public || r.N != 200 || r.Parties != 200 || r.Neighbours != "addremove" || r.Error.MaxAbs != 0 {
			t.Errorf("%s: normaliser %+v of %d parties under %s neighbours, max error %g", backend, r.Normaliser, r.Parties, r.Neighbours, r.Error.MaxAbs)
		}
		a := r.Hosmer.Allocations[0]
		if len(a.Groups) != len(r.Hosmer.True) || math.Abs(a.Groups[0].Size-r.Hosmer.True[0].Size) > 1e-6 {
			t.Errorf("%s: roc allocation groups %+v, true %+v", backend, a.Groups, r.Hosmer.True)
		}
		if !strings.Contains(r.Guarantee, "under addremove neighbours") {
			t.Errorf("%s: guarantee %q", backend, r.Guarantee)
		}
	}
}

// TestPlotTitles (issue item 6): ecdf.png's title gives the ECDF
// release's ε, not the total, and roc.png's the ROC release's own
// mechanism and ε.
func TestPlotTitles(t *testing.T) {
	cfg := Config{Parties: 300, Backend: "plain", Epsilon: 1, ECDFShare: 0.25, HosmerPlans: []string{"roc"}, Mechanism: "auto", Bins: 64, Min: 0, Max: 1, Seed: 5}
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e := r.ecdfChart().Title; !strings.Contains(e, "ε = 0.25") || !strings.Contains(e, r.ECDF.Mechanism) {
		t.Errorf("ecdf.png title %q: want the ECDF's ε 0.25 and mechanism %s", e, r.ECDF.Mechanism)
	}
	if c := r.rocChart().Title; !strings.Contains(c, "ε = 0.75") || !strings.Contains(c, r.ROC.Mechanism) {
		t.Errorf("roc.png title %q: want the ROC release's ε 0.75 and mechanism %s", c, r.ROC.Mechanism)
	}
	t.Logf("mechanisms: ECDF %s, ROC %s", r.ECDF.Mechanism, r.ROC.Mechanism)
	// calibration.png's numbers come from the ROC release (the roc
	// allocation): its title names that release's mechanism.
	cfg.Mechanism, cfg.ROCMechanism = "tree", "partitioned"
	if r, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if c := r.calibrationChart().Title; !strings.Contains(c, r.ROC.Mechanism) || strings.Contains(c, r.ECDF.Mechanism) {
		t.Errorf("calibration.png title %q: want the ROC release's mechanism %s, not the ECDF's %s", c, r.ROC.Mechanism, r.ECDF.Mechanism)
	}
}

// TestRunVerifiedWithMaliciousParties: with a verified backend and
// malicious parties, the report counts their rejected reports per reason
// (adding up to K), while n and every statistic at ε = 2^48 are the
// honest parties' exact ones, and the cost has the verification's bytes
// and, for DCF, the servers' CPU of the verified key walks; an
// allocation releasing the probability is refused on the additive backend,
// naming it, and runs on the dcf backend.
func TestRunVerifiedWithMaliciousParties(t *testing.T) {
	for _, backend := range []string{"additive", "dcf"} {
		t.Run(backend, func(t *testing.T) { runWithMalicious(t, backend) })
	}
}

func runWithMalicious(t *testing.T, backend string) {
	const malicious = 14
	cfg := Config{Parties: 200, Backend: backend, Epsilon: 1 << 48, ECDFShare: 0.25, HosmerShare: 0.25, HosmerPlans: []string{"roc", "grid"}, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Seed: 5, Malicious: malicious}
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range r.Rejected {
		total += n
	}
	if total != malicious || len(r.Rejected) < 2 {
		t.Errorf("rejected %v, want %d reports of several reasons", r.Rejected, malicious)
	}
	if r.Parties != 200 || r.Normaliser.N != 200 || r.Error.MaxAbs != 0 || r.Error.ROCArea > 1e-12 || len(r.Hosmer.Allocations) != 2 {
		t.Errorf("parties %d, n %v, ECDF error %g, ROC area error %g, %d Hosmer–Lemeshow allocations: want the 200 honest parties' exact results", r.Parties, r.Normaliser, r.Error.MaxAbs, r.Error.ROCArea, len(r.Hosmer.Allocations))
	}
	if !r.Verified || r.Cost.VerifyBytes <= 0 {
		t.Errorf("verified %v, %d bytes exchanged to verify: want verified reports, and their exchange counted", r.Verified, r.Cost.VerifyBytes)
	}
	checkAESBound(t, backend, r) // the verified dcf backend keeps the bound
	if backend != "dcf" && r.Cost.ServersCPUSeconds != nil {
		t.Errorf("%s: servers' key-walk CPU %v without DCF keys", backend, r.Cost.ServersCPUSeconds)
	}
	b, _ := json.Marshal(r)
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(string(b), `"rejected":{"`) || !strings.Contains(text.String(), verify.RejectedText(r.Rejected)) {
		t.Errorf("JSON or text lacks the rejected reports (err %v):\n%s\n%s", err, b, text.String())
	}
	cfg.HosmerPlans = []string{"roc", "joint"}
	r, err = Run(context.Background(), cfg)
	switch {
	case backend == "additive" && (err == nil || !strings.Contains(err.Error(), "probability")):
		t.Errorf("joint allocation on the additive backend: %v, want a refusal naming the probability", err)
	case backend == "dcf" && err != nil:
		t.Errorf("joint allocation on the verified dcf backend: %v", err)
	case backend == "dcf" && (r.Normaliser.N != 200 || len(r.Hosmer.Allocations) != 2):
		t.Errorf("joint allocation on the verified dcf backend: n %v, %d allocations, want the 200 honest parties and 2", r.Normaliser, len(r.Hosmer.Allocations))
	}
	cfg.Backend, cfg.Unverified, cfg.HosmerPlans = "dcf", true, []string{"roc", "grid"}
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "malicious") {
		t.Errorf("malicious parties on the unverified dcf backend: %v, want a refusal", err)
	}
}

// TestRunROCOnly: with ECDFShare 0 no ECDF release is made, the whole ε
// goes to the ROC/PR pair, and without noise its curve is the true one;
// the text report and the plots skip the ECDF.
func TestRunROCOnly(t *testing.T) {
	for _, rel := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
		t.Run(rel.String(), func(t *testing.T) {
			cfg := Config{Parties: 300, Backend: "additive", Epsilon: 1 << 48, HosmerPlans: []string{"roc"}, Mechanism: "kary", Bins: 16, Min: 0, Max: 1, Seed: 2, Neighbours: rel}
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.ECDF != nil || r.Budget.ECDF != 0 || r.Budget.ROC != cfg.Epsilon || r.Epsilon != cfg.Epsilon || len(r.Budget.Guarantees) != 2 {
				t.Errorf("ECDF %v, budget %+v, total ε %g: want no ECDF and the whole ε on ROC/PR", r.ECDF, r.Budget, r.Epsilon)
			}
			if r.Error.ROCArea > 1e-12 || r.Mechanism != r.ROC.Mechanism || r.Neighbours != rel.String() {
				t.Errorf("area error %g, mechanism %q vs ROC's %q, neighbours %q", r.Error.ROCArea, r.Mechanism, r.ROC.Mechanism, r.Neighbours)
			}
			var text strings.Builder
			if err := r.WriteText(&text); err != nil || strings.Contains(text.String(), "true F") || !strings.Contains(text.String(), "ROC/PR ε=") {
				t.Errorf("text report (err %v):\n%s", err, text.String())
			}
			paths, err := r.WritePlots(t.TempDir())
			if err != nil || len(paths) == 0 || filepath.Base(paths[0]) != "roc.png" {
				t.Errorf("plots %v, err %v: want roc.png first and no ecdf.png", paths, err)
			}
		})
	}
}

// TestRunChoosesBins: Bins 0 takes analysis.ROCBins of the number of
// parties and the ROC release's ε, under either relation.
func TestRunChoosesBins(t *testing.T) {
	for _, rel := range []mechanism.Relation{mechanism.ReplaceOne, mechanism.AddRemove} {
		t.Run(rel.String(), func(t *testing.T) {
			cfg := Config{Parties: 3000, Backend: "plain", Epsilon: 16, ECDFShare: 0.25, Mechanism: "kary", Min: 0, Max: 1, Seed: 4, Neighbours: rel, Bootstrap: -1}
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := analysis.ROCBins(3000, 12, rel)
			if r.Bins != want || len(r.ROC.FPR) != want+1 || len(r.ROC.Interpolated.FPR) != analysis.ROCInterpolation*want+1 {
				t.Errorf("%d bins, %d ROC points, %d interpolated: want %d bins", r.Bins, len(r.ROC.FPR), len(r.ROC.Interpolated.FPR), want)
			}
			if !(r.Error.ROCAreaUnbinned > 0 && r.Error.ROCAreaUnbinned < 0.05) {
				t.Errorf("area to the unbinned curve %g at ε = 12 on %d bins", r.Error.ROCAreaUnbinned, r.Bins)
			}
		})
	}
}

// TestRunROCMechanism: the default configuration releases the ROC/PR
// pair with analysis.ROCParams's choice — the partitioned release on 64
// bins, auto's mechanism on 256 (the Hosmer–Lemeshow test from that
// release runs on it too) — and the ECDF with Mechanism; ROCMechanism
// overrides it.
func TestRunROCMechanism(t *testing.T) {
	for _, c := range []struct {
		bins               int
		rocMechanism, want string
	}{{64, "", "partitioned("}, {256, "", "kary("}, {64, "tree", "tree"}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Parties, cfg.Backend, cfg.Bins, cfg.Bootstrap, cfg.ROCMechanism = 2000, "plain", c.bins, -1, c.rocMechanism
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.ROC.Mechanism, c.want) || !strings.HasPrefix(r.ECDF.Mechanism, "kary(") {
				t.Errorf("ROC/PR release by %s, ECDF by %s: want %s… and kary(…)", r.ROC.Mechanism, r.ECDF.Mechanism, c.want)
			}
			if h := r.Hosmer; h == nil || len(h.Allocations) != 1 || h.Allocations[0].Statistic == nil {
				t.Errorf("Hosmer–Lemeshow report %+v, want the roc allocation", h)
			}
		})
	}
}
