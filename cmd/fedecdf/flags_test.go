package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every --bins tells the same story, and each its own default's reason.
func TestBinsHelpOneStory(t *testing.T) {
	story := binsUsage("")
	for name, cmd := range map[string]*cobra.Command{
		"audit": newAuditCommand(), "demo": newDemoCommand(), "ecdf": newECDFCommand(),
		"experiment": newExperimentCommand(), "manifest": newManifestCommand(), "simulate": newSimulateCommand(),
	} {
		f := cmd.Flags().Lookup("bins")
		if f == nil {
			t.Errorf("%s has no --bins", name)
			continue
		}
		if !strings.HasPrefix(f.Usage, story) || len(f.Usage) == len(story) {
			t.Errorf("%s --bins: %q, want the shared story and why its default", name, f.Usage)
		}
	}
}

// simulate --parties says what --data does to its default; --backend
// lists every backend, plain too, in its help and its error.
func TestSimulatePartiesAndBackendHelp(t *testing.T) {
	cmd := newSimulateCommand()
	if f := cmd.Flags().Lookup("parties"); !strings.Contains(f.Usage, "with --data, default: every row") {
		t.Errorf("--parties help %q does not say every row with --data", f.Usage)
	}
	_, err := runSimulate("--backend", "paillier")
	for _, want := range []string{`"paillier"`, "plain", "additive", "dcf"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--backend paillier: %v, want %s named", err, want)
		}
	}
}
