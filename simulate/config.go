package simulate

// Configuration: what one simulation runs (Config, DefaultConfig), how
// it reports its progress (Progress) and the check of its verification
// settings (CheckVerification).

import (
	"fmt"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/hosmer"
)

// Config configures one simulation.
type Config struct {
	Parties  int    // n; 0 with Data means every (test) row
	Backend  string // plain, additive or dcf
	Data     string // CSV path; empty for the built-in data
	ScoreCol string // score column of Data; empty: train a logistic regression on Data
	// SkipMissing, with ScoreCol, leaves out the rows of Data missing
	// their score or label (dataset.ReadScoredRows), counted in
	// Data.Source; without it such a row is an error.
	SkipMissing bool
	LabelCol    string   // label column of Data
	Positive    string   // positive label value of Data (see dataset.ReadScored)
	Drop        []string // columns of Data that are not features (identifiers)
	// TestFraction is the held-out share of a table whose test rows become
	// the parties (0: dataset.DefaultTestFraction).
	TestFraction float64
	Epsilon      float64 // total ε: the dataset's whole budget, split by ECDFShare
	// ECDFShare is the share of Epsilon spent on the ECDF of the scores,
	// in [0, 1); 0 makes no ECDF release (a ROC-only run: Report.ECDF is
	// nil). The rest goes to the ROC/PR release (positives and negatives
	// vectors released together at that ε: one privacy unit, payload.
	// PrivacyUnits).
	ECDFShare float64
	// HosmerPlans are the Hosmer–Lemeshow allocations to run (needs
	// probability scores on a grid within [0, 1]): "roc" post-processes
	// the ROC/PR release with hosmer.GridPlan's estimator at no ε of its
	// own; "grid" (hosmer.GridPlan), "joint" (hosmer.JointPlan) and
	// "paper" (hosmer.PaperPlan, dp-ecdf's ε/(L+9)) make releases of
	// their own, sharing HosmerShare of Epsilon evenly (0 when none is
	// named). The ROC/PR release gets what the ECDF and these leave.
	HosmerShare float64
	// Bootstrap is the number B of null data sets simulated for the
	// noise-aware Hosmer–Lemeshow p-value (hosmer.Plan.NullTest; 0:
	// hosmer.DefaultNullDraws, negative: none).
	Bootstrap int
	// IntervalDraws is the number B of Monte-Carlo draws of the noise
	// law behind the ECDF band and the AUC intervals (0:
	// analysis.DefaultIntervalDraws, negative: no intervals).
	IntervalDraws int
	HosmerPlans   []string
	Mechanism     string // mechanism name (mechanism.New)
	// ROCMechanism is the mechanism of the ROC/PR release (mechanism.New);
	// empty means Mechanism. Either way "auto" becomes the partitioned
	// release where analysis.ROCParams finds it answers the grid's ends
	// with less noise (the --bins 0 grid of 10⁴–10⁵ parties, not 256
	// bins; EXPERIMENTS.md, "Private ROC curves"); the ECDF and the Hosmer–Lemeshow
	// plans' own releases use Mechanism as it is.
	ROCMechanism string
	// Delta is the δ of every release, per privacy unit (payload.
	// PrivacyUnits); the (ε, δ) mechanisms cascade and gaussian-tree need
	// it positive, and auto considers them only then.
	Delta float64
	// Neighbours is the neighbouring relation of the dataset and of every
	// release. Under replace-one (the default) n is public and the ECDF
	// is normalised by it; under add/remove the analyst is not told n and
	// normalises by the released noisy total (ecdf.Normaliser), and only
	// the roc Hosmer–Lemeshow allocation runs (the others are proved
	// under replace-one only).
	Neighbours mechanism.Relation
	// Bins is N; 0 chooses it for the ROC release from n and its ε
	// (analysis.ROCBins), n the number of parties.
	Bins     int
	Min, Max float64 // grid domain
	Prefixes int     // |B|: number of evenly spaced prefixes queried; 0 means all N
	Seed     uint64  // seed of the built-in data and of the train/test split
	// Smoothing post-processes every private curve (smooth.Apply: none,
	// l1, l2 or tree-l2; empty means l2). tree-l2 follows the release
	// mechanism's noise pattern, so it needs every prefix (Prefixes 0).
	Smoothing string
	// Unverified runs the dcf backend without verification (parties
	// upload Z_2^64 keys of their whole payload, probability included,
	// folded unchecked): for comparing the cost of verification. (The
	// verified dcf backend carries the probability too, verified, when a
	// Hosmer–Lemeshow allocation releases it.)
	Unverified bool
	// Malicious is the number of malicious parties added to the honest
	// ones (verified backends: additive, dcf): each uploads an invalid
	// report of one kind (internal/verify.Forgeries or
	// internal/vdcf.Scheme.Forgeries in turn), which both servers reject;
	// Report.Parties and every statistic cover the honest parties only,
	// Report.Rejected the malicious ones.
	Malicious int
	// Progress, if not nil, is told of each phase.
	Progress Progress
}

// DefaultConfig is the configuration of `fedecdf simulate` with no
// flags (its flags' defaults): 10 000 parties of the built-in data, two
// servers with the DCF secure sum, ε = 1 with a quarter on the ECDF, the
// Hosmer–Lemeshow test from the ROC/PR release with
// hosmer.DefaultNullDraws bootstrap draws, the auto mechanism (for the
// ROC/PR release as analysis.ROCParams resolves it), replace-one, 256
// bins over [0, 1], l2 smoothing, seed 1.
func DefaultConfig() Config {
	return Config{
		Parties: 10000, Backend: "dcf", LabelCol: "label", Epsilon: 1, ECDFShare: 0.25,
		HosmerPlans: []string{hosmerROC}, Bootstrap: hosmer.DefaultNullDraws, Mechanism: "auto",
		Neighbours: mechanism.ReplaceOne, Bins: 256, Min: 0, Max: 1, Seed: 1, Smoothing: "l2",
	}
}

// Progress follows the phases of a run: Start(phase, total) begins a
// phase of total units of work (−1 when unknown), Add(k) reports k more
// units done, Finish ends the phase.
type Progress interface {
	Start(phase string, total int)
	Add(k int)
	Finish()
}

// verified reports whether cfg's servers verify every report: the
// additive backend, and the dcf backend unless Unverified.
func verified(cfg Config) bool {
	return cfg.Backend == "additive" || cfg.Backend == "dcf" && !cfg.Unverified
}

// CheckVerification checks cfg's Unverified and Malicious against its
// backend: only the dcf backend runs unverified, and malicious parties
// need a verified backend.
func CheckVerification(cfg Config) error {
	switch {
	case cfg.Unverified && cfg.Backend != "dcf":
		return fmt.Errorf("an unverified run of the %s backend: only the dcf backend runs unverified", cfg.Backend)
	case cfg.Malicious < 0 || cfg.Malicious > 0 && !verified(cfg):
		return fmt.Errorf("%d malicious parties: want 0, or any number with a verified backend (additive, or dcf not unverified)", cfg.Malicious)
	}
	return nil
}
