package main

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
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

// docSection returns the body of the "## heading" section of
// docs/json.md, up to the next section.
func docSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/json.md has no section %q", heading)
	}
	body, _, _ = strings.Cut(body, "\n## ")
	return body
}

var backticked = regexp.MustCompile("`([^`]+)`")

// docKeys are the keys of a docs/json.md section.
type docKeys struct {
	required, optional []string
	curve              []string // keys of rows describing a curve (ROC and PR)
}

// docTable reads the key table of the docs/json.md section heading: the
// back-quoted names of each row's first cell, "release keys" standing
// for the rows of the "Release keys" section, and a row saying
// "optional" holding optional keys.
func docTable(t *testing.T, heading string) docKeys {
	t.Helper()
	var d docKeys
	for _, line := range strings.Split(docSection(t, heading), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "key" {
			continue
		}
		if strings.TrimSpace(cells[1]) == "release keys" {
			r := docTable(t, "Release keys (every result)")
			d.required = append(d.required, r.required...)
			d.optional = append(d.optional, r.optional...)
			continue
		}
		var keys []string
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			keys = append(keys, m[1])
		}
		if len(keys) == 0 {
			t.Fatalf("docs/json.md, %s: a row names no key: %s", heading, line)
		}
		if strings.Contains(line, "optional") {
			d.optional = append(d.optional, keys...)
		} else {
			d.required = append(d.required, keys...)
		}
		if strings.Contains(cells[len(cells)-2], "curve") && !slices.Contains(keys, "raw") && !slices.Contains(keys, "interpolated") {
			d.curve = append(d.curve, keys...)
		}
	}
	return d
}

// docPlus returns the back-quoted keys of the first "(plus …)" of the
// docs/json.md section heading: the keys a command adds to the object.
func docPlus(t *testing.T, heading string) []string {
	t.Helper()
	body := docSection(t, heading)
	i := strings.Index(body, "(plus ")
	if i < 0 {
		t.Fatalf("docs/json.md, %s: no \"(plus …)\" list of added keys", heading)
	}
	depth, end := 0, -1
	for j := i; j < len(body) && end < 0; j++ {
		switch body[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				end = j
			}
		}
	}
	var keys []string
	for _, m := range backticked.FindAllStringSubmatch(body[i:end], -1) {
		keys = append(keys, m[1])
	}
	return keys
}

// checkDocumented reports keys that docs/json.md does not document, and
// documented keys (required or added by the command) that are missing.
func checkDocumented(t *testing.T, what string, keys []string, d docKeys, plus []string) {
	t.Helper()
	for _, k := range append(slices.Clone(d.required), plus...) {
		if !slices.Contains(keys, k) {
			t.Errorf("%s: documented key %q missing from the output %v", what, k, keys)
		}
	}
	for _, k := range keys {
		if !slices.Contains(d.required, k) && !slices.Contains(d.optional, k) && !slices.Contains(plus, k) {
			t.Errorf("%s: key %q is not in docs/json.md", what, k)
		}
	}
}

// TestQueryKeysDocumented: fedecdf query roc, pr and hosmer --format json
// print exactly the keys docs/json.md documents for them — the table of
// the statistic plus the "(plus …)" keys of the query, the raw and
// interpolated curves the curve keys — so the documentation cannot drift from the output.
func TestQueryKeysDocumented(t *testing.T) {
	manifest, key := inProcessDeployment(t, 1<<48, 40) // budget 2ε: roc and hosmer; pr re-reads roc's release
	base := []string{"--manifest", manifest, "--key", key, "--format", "json"}
	rocDoc, rocPlus := docTable(t, "ROC and PR (`analysis.ROC`)"), docPlus(t, "ROC and PR (`analysis.ROC`)")
	if len(rocDoc.curve) == 0 {
		t.Fatal("docs/json.md documents no curve keys for ROC and PR")
	}
	roc, err := runQuery(append(base, "roc")...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Release string }
	if err := json.Unmarshal([]byte(roc), &r); err != nil {
		t.Fatal(err)
	}
	pr, err := runQuery(append(base, "--release", r.Release, "pr")...)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"query roc": roc, "query pr": pr} {
		checkDocumented(t, name, jsonKeys(t, out), rocDoc, rocPlus)
		for _, sub := range []string{"raw", "interpolated"} {
			if keys := jsonKeys(t, out, sub); !slices.Equal(keys, slices.Sorted(slices.Values(rocDoc.curve))) {
				t.Errorf("%s: %s holds %v; docs/json.md: the curve keys %v", name, sub, keys, rocDoc.curve)
			}
		}
	}
	hl, err := runQuery(append(base, "--plan", "joint", "--groups", "4", "hosmer")...)
	if err != nil {
		t.Fatal(err)
	}
	const hosmer = "Hosmer–Lemeshow (`analysis.Hosmer`)"
	checkDocumented(t, "query hosmer", jsonKeys(t, hl), docTable(t, hosmer), docPlus(t, hosmer))
}
