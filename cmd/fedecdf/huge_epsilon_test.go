package main

import (
	"encoding/json"
	"testing"
)

// TestHugeEpsilonReturnsExactCounts is the noise-free check every user
// tries first: at ε = 10^6 the node scales are rounded up to the finest
// scale the exact samplers represent (2^-62), where a nonzero node noise
// has probability about 2e^{-2^62}, so the curator and both secure-sum
// backends release exactly the true ECDF and ROC area (issue 12, item 7).
// Before, every mechanism refused ε ≳ 10^4 ("exact binary fraction …
// needs more than 62 bits").
func TestHugeEpsilonReturnsExactCounts(t *testing.T) {
	for _, mech := range []string{"tree", "kary", "auto"} {
		for _, backend := range []string{"plain", "additive", "dcf"} {
			t.Run(mech+"/"+backend, func(t *testing.T) {
				out, err := runSimulate("--parties", "300", "--bins", "16", "--epsilon", "1e6", "--mechanism", mech, "--backend", backend, "--format", "json")
				if err != nil {
					t.Fatal(err)
				}
				var r struct {
					ECDF struct {
						Private []float64 `json:"ecdf"`
					} `json:"ecdf"`
					ROC struct {
						Raw struct {
							AUC float64 `json:"auc"`
						} `json:"raw"`
					} `json:"roc"`
					True struct {
						ECDF []float64 `json:"ecdf"`
						ROC  struct {
							AUC float64 `json:"auc"`
						} `json:"roc"`
					} `json:"true"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatal(err)
				}
				if len(r.True.ECDF) == 0 || len(r.True.ECDF) != len(r.ECDF.Private) {
					t.Fatalf("ECDF of %d true and %d private values", len(r.True.ECDF), len(r.ECDF.Private))
				}
				for i, f := range r.True.ECDF {
					if r.ECDF.Private[i] != f {
						t.Errorf("threshold %d: private F̂ %v, true F %v", i, r.ECDF.Private[i], f)
					}
				}
				if r.ROC.Raw.AUC != r.True.ROC.AUC {
					t.Errorf("private AUC %v, true %v", r.ROC.Raw.AUC, r.True.ROC.AUC)
				}
			})
		}
	}
	t.Run("ecdf", func(t *testing.T) {
		out, _, err := runECDFCommand(t, "", "--input", writeCSV(t, 1000), "--column", "age", "--min", "0", "--max", "1000",
			"--bins", "100", "--epsilon", "1e6", "--smooth", "none", "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var r ecdfJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		for i, f := range r.ECDF {
			if want := float64(10*(i+1)) / 1000; f != want { // values 1..1000, thresholds 10, 20, …
				t.Errorf("threshold %d: F̂ %v, want the exact %v", i, f, want)
			}
		}
	})
}
