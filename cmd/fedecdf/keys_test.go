package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// jsonKeys returns the sorted keys of the JSON object out, or of its
// member at path (one key per level) when path is given.
func jsonKeys(t *testing.T, out string, path ...string) []string {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, out)
	}
	for _, key := range path {
		var member map[string]json.RawMessage
		if err := json.Unmarshal(obj[key], &member); err != nil {
			t.Fatalf("member %q is not a JSON object: %v", key, err)
		}
		obj = member
	}
	return slices.Sorted(maps.Keys(obj))
}

// TestECDFKeysAgree: one ECDF release prints the same keys (docs/json.md)
// whichever command makes it — fedecdf ecdf (a trusted curator), the
// ecdf object of fedecdf simulate, and fedecdf query ecdf over an
// in-process deployment, less the keys naming its stored release.
func TestECDFKeysAgree(t *testing.T) {
	curator, _, err := runECDFCommand(t, strings.Repeat("0.5\n", 40), "--min", "0", "--max", "1", "--bins", "32", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	simulated, err := runSimulate("--parties", "40", "--bins", "32", "--backend", "plain", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	manifest, key := inProcessDeployment(t, 1<<48, 40)
	queried, err := runQuery("ecdf", "--manifest", manifest, "--key", key, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	want := jsonKeys(t, curator)
	stored := []string{"charged", "dataset", "release"}
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"simulate", jsonKeys(t, simulated, "ecdf")},
		{"query ecdf", slices.DeleteFunc(jsonKeys(t, queried), func(k string) bool { return slices.Contains(stored, k) })},
	} {
		if !slices.Equal(c.keys, want) {
			t.Errorf("%s prints the ECDF keys\n%v\nfedecdf ecdf prints\n%v", c.name, c.keys, want)
		}
	}
}
