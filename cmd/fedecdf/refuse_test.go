package main

import (
	"strings"
	"testing"
)

// TestFlagsRefused: values the commands used to accept silently, or to
// refuse only late with an internal message, are refused before any
// work, naming the flag and the value.
func TestFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"simulate ε 0", []string{"simulate", "--epsilon", "0"}, "--epsilon 0: the total budget must be positive"},
		{"simulate ε negative", []string{"simulate", "--epsilon", "-1.000000000001"}, "--epsilon -1.000000000001:"},
		{"simulate ε NaN", []string{"simulate", "--epsilon", "NaN"}, "--epsilon NaN"},
		{"simulate ECDF share negative", []string{"simulate", "--ecdf-share", "-0.1"}, "--ecdf-share -0.1:"},
		{"simulate ECDF share 1", []string{"simulate", "--ecdf-share", "1"}, "--ecdf-share 1:"},
		{"simulate prefixes -1", []string{"simulate", "--prefixes", "-1"}, "--prefixes -1:"},
		{"simulate prefixes above bins", []string{"simulate", "--bins", "8", "--prefixes", "9"}, "--prefixes 9:"},
		{"simulate test fraction 0", []string{"simulate", "--test-fraction", "0"}, "--test-fraction 0:"},
		{"simulate parties 0", []string{"simulate", "--parties", "0"}, "--parties 0 is not positive"},
		{"simulate bins -1", []string{"simulate", "--bins", "-1"}, "--bins -1 is negative"},
		{"experiment bins 0", []string{"experiment", "--bins", "0"}, "--bins 0 is not positive"},
		{"party concurrency 0", []string{"party", "--concurrency", "0", "--score-value", "0.5", "--label-value", "1"}, "--concurrency 0 is not positive"},
		{"ecdf k with tree", []string{"ecdf", "--min", "0", "--max", "1", "--mechanism", "tree", "--k", "5"}, "--k 5 is the arity of the kary mechanism, but --mechanism is tree"},
		{"manifest k with tree", []string{"manifest", "--mechanism", "tree", "--k", "5"}, "--k 5 is the arity of the kary mechanism"},
		{"server without key", []string{"server", "--role", "leader", "--store", "leader.db"}, "--key is required"},
		{"server without store", []string{"server", "--role", "leader", "--key", "leader.key"}, "--store is required"},
		{"query without key", []string{"query", "ecdf"}, "--key is required"},
		{"server upload conns 0", []string{"server", "--role", "leader", "--upload-conns", "0"}, "--upload-conns 0 is not positive"},
		{"server upload timeout 0", []string{"server", "--role", "leader", "--upload-timeout", "0s"}, "--upload-timeout 0s: want a positive duration"},
		{"demo transport", []string{"demo", "--transport", "quic"}, `--transport "quic": want sealed or libp2p`},
		{"bench ingest transport", []string{"bench", "ingest", "--transport", "quic"}, `--transport "quic": want sealed or libp2p`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runRoot(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("fedecdf %s: %v, want an error with %q", strings.Join(c.args, " "), err, c.want)
			}
		})
	}
}
