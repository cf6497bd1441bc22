package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/party"
)

// runStatus runs "fedecdf status args…" in-process.
func runStatus(args ...string) (string, error) { return runCommand(newStatusCommand(), args...) }

// statusJSON runs "fedecdf status --format json" and returns its output
// and what it decodes to.
func statusJSON(t *testing.T, manifestPath, key string) (string, *analyst.Status) {
	t.Helper()
	out, err := runStatus("--manifest", manifestPath, "--key", key, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var st analyst.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	return out, &st
}

// objectKeys returns the sorted keys of each object of a JSON array.
func objectKeys(t *testing.T, raw json.RawMessage) [][]string {
	t.Helper()
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &objs); err != nil {
		t.Fatalf("not an array of objects: %v\n%s", err, raw)
	}
	keys := make([][]string, len(objs))
	for i, o := range objs {
		keys[i] = slices.Sorted(maps.Keys(o))
	}
	return keys
}

// fedecdf status over an in-process deployment with a report the helper
// refused: the text and the JSON show it held undecided by the leader
// only, the two reports both verified counted at both, the
// JSON keys are those docs/json.md documents, and a key that is no
// analyst's, or a bad --format, is refused.
func TestStatusCommand(t *testing.T) {
	m, tc, analystID, dir := inProcessServers(t, 1<<48, 1, "replace")
	p, err := client.NewParty(m, nil, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, x := range []float64{0.2, 0.6, 0.9} {
		r, err := p.NewReport(party.Instance{Score: x, Label: 1})
		if err != nil {
			t.Fatal(err)
		}
		if x == 0.9 { // the helper refuses an upload to another dataset: a leader-only report
			elsewhere := *r.Helper
			elsewhere.Dataset = "elsewhere"
			r.Helper = &elsewhere
		}
		if _, err := p.Send(context.Background(), r); (err != nil) != (x == 0.9) {
			t.Fatalf("upload of %g: %v", x, err)
		}
	}
	manifestPath, key := filepath.Join(dir, "manifest.json"), filepath.Join(dir, "analyst.key")
	if err := m.Write(manifestPath); err != nil {
		t.Fatal(err)
	}
	if err := manifest.WriteIdentity(key, analystID); err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery("--manifest", manifestPath, "--key", key, "ecdf"); err != nil {
		t.Fatal(err)
	}

	text, err := runStatus("--manifest", manifestPath, "--key", key)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`leader → helper\s+reachable`, `held by both\s+2\n`, `leader\s.*\n  reports counted\s+2\n  held, undecided\s+1\n  held here only\s+1 \(compared`, `helper\s.*\n  reports counted\s+2\n  held, undecided\s+0\n  held here only\s+0 `, `level=WARN msg="report refused" role=helper`} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("status text does not match %q:\n%s", want, text)
		}
	}

	out, st := statusJSON(t, manifestPath, key)
	if *st.ReportsBoth != 2 || *st.Servers[0].Reports != 2 || *st.Servers[0].Held != 1 || *st.Servers[0].OneServerOnly != 1 || *st.Servers[1].OneServerOnly != 0 {
		t.Errorf("status %s: want 2 known to both, the leader counting 2 and holding 1 undecided, only there", out)
	}
	checkDocumented(t, "status", jsonKeys(t, out), docTable(t, "status"), nil)
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	var servers []struct{ Releases json.RawMessage }
	if err := json.Unmarshal(top["servers"], &servers); err != nil {
		t.Fatal(err)
	}
	for i, keys := range objectKeys(t, top["servers"]) {
		checkDocumented(t, "status servers", keys, docTable(t, "status: servers"), nil)
		releases := objectKeys(t, servers[i].Releases)
		if len(releases) != 1 {
			t.Fatalf("server %d lists %d releases, want 1", i, len(releases))
		}
		checkDocumented(t, "status releases", releases[0], docTable(t, "status: releases"), nil)
	}

	other, err := manifest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(dir, "other.key")
	if err := manifest.WriteIdentity(otherKey, other); err != nil {
		t.Fatal(err)
	}
	if _, err := runStatus("--manifest", manifestPath, "--key", otherKey); err == nil || !strings.Contains(err.Error(), "is neither an analyst nor an operator of the manifest") {
		t.Errorf("status under a key that is no analyst's: %v", err)
	}
	if _, err := runStatus("--manifest", manifestPath, "--key", key, "--format", "yaml"); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("--format yaml: %v", err)
	}
}

// Under add/remove, status under an analyst's key says the counts are
// withheld and prints none, nor any error line.
func TestStatusTextWithholdsCounts(t *testing.T) {
	manifest, key := inProcessDeploymentUnder(t, 1<<48, 3, "addremove")
	text, err := runStatus("--manifest", manifest, "--key", key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "withheld: n is private under add/remove") || strings.Contains(text, "reports held") || strings.Contains(text, "last errors") {
		t.Errorf("status text under add/remove:\n%s", text)
	}
}

// fedecdf status lists each server's releases with when it created
// them, oldest first, and still does after both servers restart on their
// stores (the time is in each release's record).
func TestStatusListsReleasesWithTime(t *testing.T) {
	c := startCluster(t, 1<<40, 1, "replace")
	p, err := client.NewParty(c.m, nil, c.tc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Submit(context.Background(), party.Instance{Score: 0.4, Label: 1}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	manifestPath, key := filepath.Join(c.dir, "manifest.json"), filepath.Join(c.dir, "analyst.key")
	if err := manifest.WriteIdentity(key, c.ids["analyst"]); err != nil {
		t.Fatal(err)
	}
	writeManifest := func() {
		if err := os.Remove(manifestPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := c.m.Write(manifestPath); err != nil {
			t.Fatal(err)
		}
	}
	writeManifest()
	var releases []string // in the order created
	var times []time.Time
	for i := range 2 {
		if i > 0 { // the first release is done: the second starts in the next clock second
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		}
		before := time.Now().Truncate(time.Second)
		out, err := runQuery("--manifest", manifestPath, "--key", key, "--format", "json", "ecdf")
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Release string }
		if err := json.Unmarshal([]byte(out), &e); err != nil || e.Release == "" {
			t.Fatalf("query ecdf: %v\n%s", err, out)
		}
		releases, times = append(releases, e.Release), append(times, before)
	}
	check := func(when string) {
		t.Helper()
		text, err := runStatus("--manifest", manifestPath, "--key", key)
		if err != nil {
			t.Fatal(err)
		}
		line := regexp.MustCompile(`(?m)^ {4}([0-9a-f]{32})  (\S+)  tree replace`)
		for _, role := range []string{"leader", "helper"} {
			block := text[strings.Index(text, "\n"+role):]
			got := line.FindAllStringSubmatch(block, 2)
			if len(got) != 2 {
				t.Fatalf("%s: the %s lists %d releases with a time, want 2:\n%s", when, role, len(got), text)
			}
			for i, m := range got {
				at, err := time.Parse(time.RFC3339, m[2])
				if m[1] != releases[i] || err != nil || at.Before(times[i]) || (i == 0 && !at.Before(times[1])) {
					t.Errorf("%s: the %s lists release %s created %q as number %d, want %s created from %v on (%v), oldest first:\n%s", when, role, m[1], m[2], i+1, releases[i], times[i], err, text)
				}
			}
		}
		_, st := statusJSON(t, manifestPath, key)
		for _, sv := range st.Servers {
			for i, r := range sv.Releases {
				if r.Release != releases[i] || r.Created == "" {
					t.Errorf("%s: JSON lists %s's release %d as %s created %q, want %s with its time", when, sv.Role, i, r.Release, r.Created, releases[i])
				}
			}
		}
	}
	check("running")
	for _, role := range []string{"leader", "helper"} {
		if err := c.servers[role].Close(); err != nil {
			t.Fatal(err)
		}
	}
	c.start(t)
	writeManifest()
	check("after a restart")
}
