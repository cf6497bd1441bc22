package ecdf

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func testReport(t *testing.T) (*Report, *Private) {
	t.Helper()
	g, err := NewLinearGrid(0, 20, 20)
	if err != nil {
		t.Fatal(err)
	}
	hist := make([]int64, 20)
	for i := range hist {
		hist[i] = int64(i % 3)
	}
	p, err := NewPrivate(uniformMechanism{bins: 20, a: 2}, hist, seedOf(9))
	if err != nil {
		t.Fatal(err)
	}
	smoothed := ECDF(hist) // stands in for a smoothed curve
	r, err := NewReport(p, g, "l2", smoothed, []float64{0.5, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	return r, p
}

func TestReportJSON(t *testing.T) {
	r, p := testReport(t)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"n", "n_public", "epsilon", "delta", "mechanism", "neighbours", "thresholds", "ecdf", "smoothed", "quantiles"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON lacks key %q", key)
		}
	}
	for _, key := range []string{"thresholds", "ecdf", "smoothed"} {
		if a, ok := got[key].([]any); !ok || len(a) != 20 {
			t.Errorf("%s is not an array of 20 values: %v", key, got[key])
		}
	}
	if !slices.Equal(r.ECDF, p.Curve()) {
		t.Error("ecdf is not the raw private curve")
	}
	q := got["quantiles"].(map[string]any)
	if len(q) != 2 || q["0.25"] == nil || q["0.5"] == nil {
		t.Errorf("quantiles = %v", q)
	}
	if got["n"].(float64) != 19 || got["n_public"] != true || got["neighbours"] != "replace" || got["mechanism"] != "uniform(a=2)" {
		t.Errorf("n, neighbours, mechanism = %v, %v, %v", got["n"], got["neighbours"], got["mechanism"])
	}
}

func TestReportText(t *testing.T) {
	r, _ := testReport(t)
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"n = 19 (public under replace-one)", "ε = 1", "replace neighbours", "mechanism uniform(a=2)", "20 linear bins over [0, 20]", "p = 0.25", "p = 0.5"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "p = 0.25") > strings.Index(out, "p = 0.5 ") {
		t.Errorf("quantiles are not in increasing order of probability:\n%s", out)
	}
	// Ten rows follow the table header, up to the blank line.
	lines := strings.Split(out, "\n")
	header := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "threshold") && strings.Contains(l, "private") })
	rows := slices.Index(lines[header:], "") - 1
	if header < 0 || rows != 10 {
		t.Errorf("table has %d rows, want 10:\n%s", rows, out)
	}
}

func TestReportRejectsMismatch(t *testing.T) {
	_, p := testReport(t)
	g, _ := NewLinearGrid(0, 1, 5)
	if _, err := NewReport(p, g, "none", p.Curve(), nil); err == nil {
		t.Error("NewReport accepted a grid of the wrong size")
	}
}

func TestEvenlySpaced(t *testing.T) {
	cases := []struct {
		n, k int
		want []int
	}{
		{20, 10, []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}},
		{3, 10, []int{1, 2, 3}},
		{1, 10, []int{1}},
		{1024, 4, []int{256, 512, 768, 1024}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			if got := evenlySpaced(c.n, c.k); !slices.Equal(got, c.want) {
				t.Errorf("evenlySpaced(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
			}
		})
	}
}
