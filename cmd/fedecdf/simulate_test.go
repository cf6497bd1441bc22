package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// runSimulate runs "fedecdf simulate args…" in-process and returns its
// standard output.
func runSimulate(args ...string) (string, error) {
	return runCommand(newSimulateCommand(), args...)
}

// simulateJSON is the part of simulate's JSON output the tests read.
type simulateJSON struct {
	Parties    int     `json:"parties"`
	N          int64   `json:"n"`
	NPublic    *bool   `json:"n_public"`
	Neighbours string  `json:"neighbours"`
	Mechanism  string  `json:"mechanism"`
	Delta      float64 `json:"delta"`
	Budget     struct {
		Guarantees []string `json:"guarantees"`
	} `json:"budget"`
	ECDF struct {
		Private []float64 `json:"ecdf"`
	} `json:"ecdf"`
}

// TestSimulateNeighboursAndDelta runs simulate with --neighbours and
// --delta: the relation and δ reach every release (its stated guarantee),
// the (ε, δ) mechanisms run given δ > 0, and the output says whether n is
// public — the number of parties under replace-one; under add/remove the
// noisy total the private ECDF is normalised by, so that F̂(τ_N) = 1.
func TestSimulateNeighboursAndDelta(t *testing.T) {
	base := []string{"--parties", "400", "--bins", "16", "--backend", "plain", "--epsilon", "8"}
	for _, c := range []struct {
		name       string
		args       []string
		neighbours string
		mechanism  string
		delta      float64
	}{
		{"default", nil, "replace", "", 0},
		{"replace", []string{"--neighbours", "replace", "--mechanism", "tree"}, "replace", "tree", 0},
		{"addremove", []string{"--neighbours", "addremove", "--mechanism", "kary"}, "addremove", "kary", 0},
		{"addremove over the servers", []string{"--neighbours", "addremove", "--backend", "dcf"}, "addremove", "", 0},
		{"cascade", []string{"--mechanism", "cascade", "--delta", "1e-6"}, "replace", "cascade", 1e-6},
		{"gaussian-tree, addremove", []string{"--mechanism", "gaussian-tree", "--delta", "1e-6", "--neighbours", "addremove"}, "addremove", "gaussian-tree", 1e-6},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runSimulate(append(append(append([]string{}, base...), c.args...), "--format", "json")...)
			if err != nil {
				t.Fatal(err)
			}
			var r simulateJSON
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("JSON output: %v\n%s", err, out)
			}
			public := c.neighbours == "replace"
			if r.Neighbours != c.neighbours || r.NPublic == nil || *r.NPublic != public || r.Delta != c.delta || !strings.HasPrefix(r.Mechanism, c.mechanism) {
				t.Errorf("neighbours %q, n_public %v, δ %g, mechanism %q; want %q, %v, %g, %q", r.Neighbours, r.NPublic, r.Delta, r.Mechanism, c.neighbours, public, c.delta, c.mechanism)
			}
			for _, g := range r.Budget.Guarantees {
				if !strings.Contains(g, "under "+c.neighbours+" neighbours") && !strings.Contains(g, "Hosmer–Lemeshow, roc allocation") {
					t.Errorf("guarantee %q is not under %s neighbours", g, c.neighbours)
				}
			}
			last := r.ECDF.Private[len(r.ECDF.Private)-1]
			if public && (r.N != int64(r.Parties) || r.Parties != 400) || !public && last != 1 {
				t.Errorf("n = %d of %d parties, F̂(τ_N) = %v: want n = 400 (replace-one) or F̂(τ_N) = 1 (add/remove)", r.N, r.Parties, last)
			}
			text, err := runSimulate(append(append([]string{}, base...), c.args...)...)
			want := map[bool]string{true: "n = 400 (public under replace-one)", false: "(noisy total; n is private under add/remove)"}[public]
			if err != nil || !strings.Contains(text, want) {
				t.Errorf("text output (%v) lacks %q:\n%s", err, want, text)
			}
		})
	}
}

// TestSimulateFlagErrors: bad flags are refused, naming the flag to fix,
// before anything runs.
func TestSimulateFlagErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"cascade without delta", []string{"--mechanism", "cascade"}, []string{"--delta", "cascade"}},
		{"gaussian-tree without delta", []string{"--mechanism", "gaussian-tree"}, []string{"--delta", "gaussian-tree"}},
		{"delta out of range", []string{"--mechanism", "cascade", "--delta", "1"}, []string{"delta 1"}},
		{"unknown relation", []string{"--neighbours", "swap"}, []string{"--neighbours", "swap"}},
		{"own Hosmer releases under add/remove", []string{"--neighbours", "addremove", "--hosmer-plans", "roc,grid", "--hosmer-share", "0.25"}, []string{"replace-one", "grid"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runSimulate(append([]string{"--parties", "50", "--bins", "16", "--backend", "plain"}, c.args...)...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

// TestBenchAccuracyNeighboursFlag: bench accuracy spells the relation
// --neighbours, like every command, and refuses a bad value before any
// measurement.
func TestBenchAccuracyNeighboursFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "accuracy", "--neighbours", "swap"}, "--neighbours"},
		{[]string{"bench", "accuracy", "--relation", "replace"}, "unknown flag: --relation"},
	} {
		t.Run(strings.Join(c.args[2:], " "), func(t *testing.T) {
			if _, err := runCommand(newRootCommand(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: error %v, want it to name %q", c.args, err, c.want)
			}
		})
	}
}
