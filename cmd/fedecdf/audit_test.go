package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// runAuditCommand runs "fedecdf audit args…" in-process.
func runAuditCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newAuditCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestAuditCommandJSON(t *testing.T) {
	out, err := runAuditCommand(t, "--mechanism", "kary", "--neighbours", "addremove", "--component", "label",
		"--epsilon", "2", "--bins", "8", "--trials", "400", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"mechanism", "neighbours", "component", "epsilon", "delta", "bins", "trials", "lower_bound", "control", "pair", "verdict"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	var r struct {
		Mechanism, Neighbours, Component string
		Epsilon, Delta                   float64
		Bins, Trials                     int
		LowerBound                       *float64 `json:"lower_bound"`
		Control                          struct {
			LowerBound *float64 `json:"lower_bound"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Mechanism != "kary" || r.Neighbours != "addremove" || r.Component != "label" || r.Epsilon != 2 || r.Delta != 0 ||
		r.Bins != 8 || r.Trials != 400 || r.LowerBound == nil || r.Control.LowerBound == nil {
		t.Errorf("JSON does not echo the flags or lacks the bounds: %s", out)
	}
}

func TestAuditCommandText(t *testing.T) {
	out, err := runAuditCommand(t, "--bins", "4", "--trials", "200")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tree, replace neighbours, component count, N = 4 bins", "worst-case pair", "ε lower bound", "verdict: ", "control: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Errors name the flag and say what to do.
func TestAuditCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mechanism", "cascade"}, "--delta 0: cascade is an (ε, δ) mechanism: give δ in (0, 1)"},
		{[]string{"--mechanism", "auto"}, "--mechanism auto: unknown; want tree, kary, cascade, gaussian-tree or partitioned"},
		{[]string{"--bins", "1000"}, "--bins 1000: must be between 2 and 256"},
		{[]string{"--trials", "10"}, "--trials 10: must be between 100"},
		{[]string{"--epsilon", "-1"}, "--epsilon -1: must be positive"},
		{[]string{"--component", "foo"}, "--component: unknown payload component"},
		{[]string{"--neighbours", "swap"}, "--neighbours: unknown neighbouring relation"},
		{[]string{"--format", "xml"}, `--format "xml": want text or json`},
		{[]string{"--mechanism", "counting-on-trees", "--delta", "1e-3", "--alpha", "0"}, "--alpha 0: counting-on-trees needs a multiplicative slack in (0, 1)"},
		{[]string{"--mechanism", "counting-on-trees", "--delta", "1e-3", "--arity", "1"}, "--arity 1: must be at least 2"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			_, err := runAuditCommand(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("audit %v: error %v, want one containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// The counting-on-trees audit prints its end-to-end and step audits and
// what it cannot check; its JSON has the documented keys.
func TestAuditCommandCountingOnTrees(t *testing.T) {
	args := []string{"--mechanism", "counting-on-trees", "--epsilon", "4", "--delta", "1e-3", "--alpha", "0.5", "--bins", "4", "--trials", "400"}
	out, err := runAuditCommand(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"counting-on-trees(α=0.5,b=2), replace neighbours, N = 4 bins", "end to end", "root bound", "sparse vector", "verdict: ", "not checked: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runAuditCommand(t, append(args, "--format", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Release struct {
			LowerBound *float64 `json:"lower_bound"`
		}
		Steps []struct {
			Name          string
			LowerBound    *float64 `json:"lower_bound"`
			ControlCaught *bool    `json:"control_caught"`
		}
		Verdict, Unchecked string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if r.Release.LowerBound == nil || len(r.Steps) == 0 || r.Steps[0].LowerBound == nil || r.Steps[0].ControlCaught == nil || r.Verdict == "" || r.Unchecked == "" {
		t.Errorf("JSON lacks documented keys:\n%s", out)
	}
}
