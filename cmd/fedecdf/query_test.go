package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/hosmer"

	ma "github.com/multiformats/go-multiaddr"
	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// runQuery runs "fedecdf query args…" in-process.
func runQuery(args ...string) (string, error) { return runCommand(newQueryCommand(), args...) }

// runCommand runs cmd with args in-process and returns its standard
// output.
func runCommand(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// inProcessDeployment starts a leader and a helper on 127.0.0.1 in this
// process (no child processes) with a tree mechanism at epsilon, submits
// n calibrated reports (probability = score), and returns the manifest
// and analyst key paths.
func inProcessDeployment(t *testing.T, epsilon float64, n int) (manifest, key string) {
	t.Helper()
	return inProcessDeploymentUnder(t, epsilon, n, "replace")
}

// inProcessDeploymentUnder is inProcessDeployment with a manifest of the
// given neighbouring relation.
func inProcessDeploymentUnder(t *testing.T, epsilon float64, n int, relation string) (manifestPath, key string) {
	t.Helper()
	m, tc, analyst, dir := inProcessServers(t, epsilon, n, relation)
	p, err := client.NewParty(m, nil, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	for range n {
		x := rng.Float64()
		y := 0
		if rng.Float64() < x {
			y = 1
		}
		if _, err := p.Submit(context.Background(), party.Instance{Score: x, Label: y, Probability: x, HasProbability: true}); err != nil {
			t.Fatal(err)
		}
	}
	manifestPath, key = filepath.Join(dir, "manifest.json"), filepath.Join(dir, "analyst.key")
	if err := m.Write(manifestPath); err != nil {
		t.Fatal(err)
	}
	if err := manifest.WriteIdentity(key, analyst); err != nil {
		t.Fatal(err)
	}
	return manifestPath, key
}

// inProcessServers starts a leader and a helper on 127.0.0.1 in this
// process with a tree mechanism at epsilon under relation, releasing
// from minReports reports, and returns their manifest, a quiet transport
// configuration, the analyst's identity and a scratch directory.
func inProcessServers(t *testing.T, epsilon float64, minReports int, relation string) (m *manifest.Manifest, tc p2p.Config, analyst *manifest.Identity, dir string) {
	t.Helper()
	c := startCluster(t, epsilon, minReports, relation)
	return c.m, c.tc, c.ids["analyst"], c.dir
}

// cluster is an in-process deployment: its manifest, a quiet transport
// configuration, the identities of leader, helper and analyst, the
// running servers by role and a scratch directory.
type cluster struct {
	m       *manifest.Manifest
	tc      p2p.Config
	ids     map[string]*manifest.Identity
	servers map[string]*deploy.Server
	dir     string
}

// startCluster is inProcessServers returning the whole cluster.
func startCluster(t *testing.T, epsilon float64, minReports int, relation string) *cluster {
	t.Helper()
	c := &cluster{dir: t.TempDir(), ids: map[string]*manifest.Identity{}, servers: map[string]*deploy.Server{}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c.tc = p2p.Config{Logger: quiet, Backoff: time.Millisecond, CallTimeout: time.Minute}
	ids := c.ids
	for _, name := range []string{"leader", "helper", "analyst"} {
		id, err := manifest.NewIdentity()
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	m := &manifest.Manifest{
		Version: manifest.ManifestVersion, Protocol: protocol.Version, Dataset: "cli", Backend: string(server.DCF), Upload: manifest.UploadDirect,
		Leader:     manifest.Endpoint{Public: ids["leader"].Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Helper:     manifest.Endpoint{Public: ids["helper"].Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Analysts:   []string{ids["analyst"].PeerID.String()},
		Grid:       manifest.Grid{Scale: "linear", Min: 0, Max: 1, Bins: 32},
		Payload:    manifest.PayloadLayout(),
		Mechanism:  manifest.Mech{Name: "tree", Epsilon: epsilon, Neighbours: relation, Allowed: []string{"tree"}},
		Budget:     manifest.Budget{Epsilon: 2 * epsilon},
		MinReports: minReports,
	}
	c.m = m
	c.start(t)
	return c
}

// start starts the cluster's helper, then its leader, on their stores
// in c.dir (those of an earlier start: a restart), and sets the
// manifest's addresses to theirs.
func (c *cluster) start(t *testing.T) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, s := range []struct {
		role server.Role
		ep   *manifest.Endpoint
	}{{server.Helper, &c.m.Helper}, {server.Leader, &c.m.Leader}} {
		srv, err := deploy.StartServer(deploy.ServerConfig{
			Role: s.role, Identity: c.ids[s.role.String()], Manifest: c.m, Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
			Store: filepath.Join(c.dir, s.role.String()+".db"), Logger: quiet, Transport: c.tc,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		c.servers[s.role.String()] = srv
		s.ep.Addrs = nil
		for _, a := range srv.Addrs() {
			s.ep.Addrs = append(s.ep.Addrs, a.String())
		}
	}
}

// fedecdf query hosmer over an in-process deployment at a huge ε: the
// JSON result, the text table and the files of --out agree, and
// arguments the query cannot use are refused before anything is spent.
func TestQueryHosmer(t *testing.T) {
	manifest, key := inProcessDeployment(t, 1<<48, 120)
	dir := filepath.Join(t.TempDir(), "out")
	out, err := runQuery("--manifest", manifest, "--key", key, "--format", "json", "--plan", "joint", "--groups", "4", "--out", dir, "hosmer")
	if err != nil {
		t.Fatal(err)
	}
	var h analyst.Hosmer
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out)
	}
	if h.Plan != "joint" || h.N != 120 || h.Statistic == nil || h.PValueNaive == nil || h.PValuePrivate == nil || h.PValueSE == nil || h.BootstrapDraws != hosmer.DefaultNullDraws || len(h.Groups) != 4 || len(h.Releases) != 1 {
		t.Fatalf("hosmer JSON: %+v", h)
	}
	png, err := os.ReadFile(filepath.Join(dir, "calibration.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("calibration.png: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hosmer.json")); err != nil || !json.Valid(b) {
		t.Fatalf("hosmer.json: %v", err)
	}

	text, err := runQuery("--manifest", manifest, "--key", key, "--plan", "paper", "--groups", "4", "hosmer")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fedecdf query --plan paper --groups 4 hosmer:\n%s", text)
	// At a huge ε both plans release the exact groups: the same H.
	wantH := "H = " + strconv.FormatFloat(*h.Statistic, 'g', 4, 64) + " with 4 groups"
	for _, want := range []string{"paper plan", "group       bins", "obs. s.d.", "obs. rate [95 % interval]", "replace neighbours", wantH, "naive χ²_2 p-value " + strconv.FormatFloat(*h.PValueNaive, 'g', 4, 64), "noise-aware p-value "} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hosmer", "3"}, "hosmer takes no argument"},
		{[]string{"--release", "ab", "hosmer"}, `release ID "ab" is not 16 hexadecimal bytes`},
		{[]string{"--release", strings.Repeat("ab", 16), "--plan", "paper", "hosmer"}, "drop --release"},
		{[]string{"--plan", "wishful", "hosmer"}, `plan "wishful" is unknown`},
		{[]string{"--groups", "2", "hosmer"}, "number of groups 2"},
		{[]string{"--smooth", "l3", "hosmer"}, `unknown smoothing method "l3"`},
		// The budget is 2ε and both queries above spent ε each.
		{[]string{"hosmer"}, "budget"},
	} {
		if _, err := runQuery(append([]string{"--manifest", manifest, "--key", key}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("query %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// fedecdf query roc then hosmer --release on its ID: the Hosmer–Lemeshow
// test of the grid plan comes from the ROC release, marked uncharged (no
// new release), and re-reading the ROC release gives the same curve.
func TestQueryHosmerFromROCRelease(t *testing.T) {
	manifest, key := inProcessDeployment(t, 1<<48, 120)
	base := []string{"--manifest", manifest, "--key", key, "--format", "json"}
	out, err := runQuery(append(base, "roc")...)
	if err != nil {
		t.Fatal(err)
	}
	var r analyst.ROC
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Charged {
		t.Fatalf("roc JSON (%v): %s", err, out)
	}
	out, err = runQuery(append(base, "--release", r.Release, "--groups", "4", "hosmer")...)
	if err != nil {
		t.Fatal(err)
	}
	var h analyst.Hosmer
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.Charged || h.Plan != "grid" || h.Statistic == nil || len(h.Releases) != 1 || h.Releases[0] != r.Release {
		t.Fatalf("hosmer --release (%v): %s", err, out)
	}
	out, err = runQuery(append(base, "--release", r.Release, "roc")...)
	if err != nil {
		t.Fatal(err)
	}
	var again analyst.ROC
	if err := json.Unmarshal([]byte(out), &again); err != nil || again.Charged || again.AUC != r.AUC || !slices.Equal(again.TPR, r.TPR) {
		t.Fatalf("roc --release (%v): %s", err, out)
	}
	// --order sklearn: the same curve, its arrays reversed.
	out, err = runQuery(append(base, "--release", r.Release, "--order", "sklearn", "roc")...)
	if err != nil {
		t.Fatal(err)
	}
	var sk analyst.ROC
	if err := json.Unmarshal([]byte(out), &sk); err != nil || sk.Order != "sklearn" || sk.AUC != r.AUC {
		t.Fatalf("roc --order sklearn (%v): %s", err, out)
	}
	slices.Reverse(sk.TPR)
	slices.Reverse(sk.Thresholds)
	if !slices.Equal(sk.TPR, r.TPR) || !slices.Equal(sk.Thresholds, r.Thresholds) || len(r.Thresholds) == 0 {
		t.Errorf("roc --order sklearn: tpr and thresholds reversed %v, %v; want %v, %v", sk.TPR, sk.Thresholds, r.TPR, r.Thresholds)
	}
}

// The text output of an undefined H says why, and --out writes the JSON
// (statistic null) but no chart.
func TestWriteHosmerUndefined(t *testing.T) {
	h := &analyst.Hosmer{Dataset: "d", Normaliser: ecdf.Normaliser{N: 100, Public: true}, Releases: []string{"ab"}, GroupsAsked: 10,
		Hosmer: analysis.Hosmer{Plan: "joint", Error: "hosmer: Hosmer–Lemeshow statistic undefined: group 3"}}
	var b bytes.Buffer
	if err := writeHosmerText(&b, h); err != nil || !strings.Contains(b.String(), "H undefined: hosmer: Hosmer–Lemeshow statistic undefined: group 3") {
		t.Fatalf("text: %v\n%s", err, b.String())
	}
	dir := t.TempDir()
	if err := writeHosmerFiles(dir, h); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "hosmer.json"))
	if err != nil || !strings.Contains(string(raw), `"statistic": null`) || !strings.Contains(string(raw), `"p_value_private": null`) {
		t.Fatalf("hosmer.json: %v\n%s", err, raw)
	}
	if _, err := os.Stat(filepath.Join(dir, "calibration.png")); !os.IsNotExist(err) {
		t.Errorf("calibration.png written for an undefined H: %v", err)
	}
}

// --out creates its directory, with the result's JSON and PNG for
// ecdf, roc and pr; a path that
// cannot be a directory is refused before any release, so the whole
// budget (2ε) remains for two queries afterwards.
func TestQueryOutDirectory(t *testing.T) {
	manifest, key := inProcessDeployment(t, 1<<48, 120)
	base := []string{"--manifest", manifest, "--key", key}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runQuery(append(base, "--out", filepath.Join(file, "sub"), "ecdf")...); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Fatalf("--out under a file: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "new", "results")
	for _, stat := range []string{"ecdf", "roc", "pr"} {
		args := append(base, "--out", dir, stat)
		if stat == "pr" { // the roc release's PR curve, free
			var r struct{ Release string }
			if b, err := os.ReadFile(filepath.Join(dir, "roc.json")); err != nil || json.Unmarshal(b, &r) != nil {
				t.Fatalf("roc.json: %v", err)
			}
			args = append(base, "--release", r.Release, "--out", dir, stat)
		}
		if _, err := runQuery(args...); err != nil {
			t.Fatalf("%s: %v", stat, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, stat+".json")); err != nil || !json.Valid(b) {
			t.Errorf("%s.json: %v", stat, err)
		}
		if png, err := os.ReadFile(filepath.Join(dir, stat+".png")); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s.png: %v", stat, err)
		}
	}
}

// fedecdf query says in every output whether n is public: under
// replace-one the number of reports (JSON n_public true, text "public
// under replace-one"); under add/remove a noisy total the leader did not
// tell (n_public false, "n is private under add/remove"). The re-read of
// --release is free, so one release per statistic serves both formats.
func TestQuerySaysWhetherNIsPublic(t *testing.T) {
	const n = 120
	for _, c := range []struct {
		relation string
		public   bool
		text     string
	}{
		{"replace", true, "n = 120 (public under replace neighbours)"},
		{"addremove", false, "(noisy total; n is private under addremove neighbours)"},
	} {
		t.Run(c.relation, func(t *testing.T) {
			manifest, key := inProcessDeploymentUnder(t, 64, n, c.relation) // ε large enough that no class total goes negative
			base := []string{"--manifest", manifest, "--key", key}
			for _, stat := range []string{"ecdf", "roc"} {
				out, err := runQuery(append(base, "--format", "json", stat)...)
				if err != nil {
					t.Fatalf("%s: %v", stat, err)
				}
				var r struct {
					N       int64  `json:"n"`
					NPublic *bool  `json:"n_public"`
					Release string `json:"release"`
				}
				if err := json.Unmarshal([]byte(out), &r); err != nil || r.NPublic == nil || *r.NPublic != c.public || (c.public && r.N != n) {
					t.Errorf("%s JSON (%v): n %d, n_public %v; want public %v\n%s", stat, err, r.N, r.NPublic, c.public, out)
				}
				text, err := runQuery(append(base, "--release", r.Release, stat)...)
				if err != nil || !strings.Contains(text, c.text) {
					t.Errorf("%s text (%v) lacks %q:\n%s", stat, err, c.text, text)
				}
			}
		})
	}
}
