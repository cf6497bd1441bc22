package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// simulate --order sklearn writes the private and the true ROC arrays in
// scikit-learn's order (fpr ascending, PR ending in recall 0, precision
// 1) and says so in "order"; the default is the threshold order, and an
// unknown order is refused.
func TestSimulateOrderFlag(t *testing.T) {
	type curve struct {
		FPR       []float64 `json:"fpr"`
		Recall    []float64 `json:"recall"`
		Precision []float64 `json:"precision"`
	}
	var got [2]struct {
		ROC struct {
			curve
			Order string `json:"order"`
		} `json:"roc"`
		True struct {
			ROC curve `json:"roc"`
		} `json:"true"`
	}
	for k, order := range []string{"threshold", "sklearn"} {
		out, err := runSimulate("--parties", "200", "--bins", "16", "--backend", "plain", "--format", "json", "--bootstrap", "-1", "--interval-draws", "0", "--seed", "7", "--order", order)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &got[k]); err != nil {
			t.Fatal(err)
		}
	}
	thr, sk := got[0], got[1]
	if thr.ROC.Order != "" || sk.ROC.Order != "sklearn" {
		t.Errorf("order %q and %q, want absent and sklearn", thr.ROC.Order, sk.ROC.Order)
	}
	// The data (--seed) are the same in both runs, the noise is not: the
	// true curve is compared array by array, the private one by shape.
	rev := slices.Clone(thr.True.ROC.FPR)
	slices.Reverse(rev)
	if !slices.Equal(sk.True.ROC.FPR, rev) {
		t.Errorf("true fpr in sklearn's order %v, want %v reversed", sk.True.ROC.FPR, thr.True.ROC.FPR)
	}
	if k := len(thr.True.ROC.Recall); len(sk.True.ROC.Recall) != k+1 || !slices.Equal(sk.True.ROC.Recall[:k], thr.True.ROC.Recall) {
		t.Errorf("true recall in sklearn's order %v, want %v and 0", sk.True.ROC.Recall, thr.True.ROC.Recall)
	}
	for name, c := range map[string]curve{"private": sk.ROC.curve, "true": sk.True.ROC} {
		k := len(c.Recall) - 1
		if !slices.IsSorted(c.FPR) || c.FPR[0] != 0 || c.FPR[len(c.FPR)-1] != 1 || c.Recall[k] != 0 || c.Precision[k] != 1 {
			t.Errorf("%s curve in sklearn's order: fpr %v, recall %v, precision %v; want fpr ascending from 0 to 1, PR ending in (0, 1)", name, c.FPR, c.Recall, c.Precision)
		}
	}
	if slices.IsSorted(thr.ROC.FPR) {
		t.Errorf("private fpr in the threshold order %v: want descending", thr.ROC.FPR)
	}
	if _, err := runSimulate("--order", "proc"); err == nil || !strings.Contains(err.Error(), "--order") {
		t.Errorf("--order proc: %v", err)
	}
	if newQueryCommand().Flags().Lookup("order") == nil {
		t.Error("query has no --order")
	}
}
