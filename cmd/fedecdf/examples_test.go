package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execStart returns the arguments of a systemd unit's ExecStart line
// (continuation lines joined), without the program.
func execStart(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			args := strings.Fields(rest)
			if len(args) < 2 || filepath.Base(args[0]) != "fedecdf" {
				t.Fatalf("%s: ExecStart runs %q, not fedecdf", unit, rest)
			}
			return args[1:]
		}
	}
	t.Fatalf("%s has no ExecStart", unit)
	return nil
}

// Every systemd unit under examples/ runs a fedecdf command whose flags
// this binary parses (a renamed or removed flag fails here, not at an
// operator's restart), with the probes' listener set.
func TestExampleUnitsParse(t *testing.T) {
	units, err := filepath.Glob("../../examples/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no systemd unit under examples/: %v", err)
	}
	for _, unit := range units {
		t.Run(filepath.Base(unit), func(t *testing.T) {
			args := execStart(t, unit)
			cmd, rest, err := newRootCommand().Find(args)
			if err != nil || cmd.Name() != "server" {
				t.Fatalf("ExecStart %v: command %v, %v; want fedecdf server", args, cmd.Name(), err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("ExecStart flags: %v", err)
			}
			if extra := cmd.Flags().Args(); len(extra) > 0 {
				t.Errorf("ExecStart has stray arguments %q", extra)
			}
			for _, name := range []string{"role", "key", "manifest", "store", "metrics"} {
				if !cmd.Flags().Changed(name) {
					t.Errorf("ExecStart does not set --%s", name)
				}
			}
		})
	}
}
