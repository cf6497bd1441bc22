package apicheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outsideMain is a program of another module: it imports only public
// packages, runs a deployment of two embedded servers (the leader and
// the helper, over an in-process network), uploads eight records as
// parties and reads back the private ECDF of a release.
const outsideMain = `package main

import (
	"context"
	"fmt"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/local"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/party"
)

func main() {
	ctx := context.Background()
	const bins = 8
	g, err := ecdf.NewLinearGrid(0, 1, bins)
	check(err)
	var parties []*party.Party
	for _, s := range []float64{0.05, 0.1, 0.3, 0.35, 0.5, 0.6, 0.9, 1} {
		p, err := party.New(party.Instance{Score: s, Label: 1}, g)
		check(err)
		parties = append(parties, p)
	}
	// ε = 2^48: the noise is zero with overwhelming probability, so
	// the exact ECDF shows through.
	d, err := local.New(ctx, local.Config{
		Backend: "dcf", Dataset: "outside", Bins: bins, Budget: mechanism.Budget{Epsilon: 1 << 48}, MinReports: 5,
	}, parties)
	check(err)
	rel, err := d.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1 << 48, Relation: mechanism.ReplaceOne}})
	check(err)
	e, err := analysis.QueryECDF(ctx, d, rel, g, analysis.AllPrefixes(bins), 0)
	check(err)
	fmt.Println("counts", e.Counts, "ecdf", e.Raw)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
`

// TestOutsideModule builds and runs, in a module of its own outside the
// repository (a replace directive pointing here), a program that
// imports only public packages and reads a private ECDF from a
// deployment of two embedded servers. The module cache is used offline
// (GOPROXY=off, GOFLAGS=-mod=mod).
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not with -short")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := "go 1.26.0"
	for _, l := range strings.Split(string(goMod), "\n") {
		if strings.HasPrefix(l, "go ") {
			goLine = l
		}
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/outside\n\n" + goLine + "\n\nrequire " + module + " v0.0.0\n\nreplace " + module + " => " + repo + "\n",
		"main.go": outsideMain,
	}
	if sum, err := os.ReadFile(filepath.Join(repo, "go.sum")); err == nil {
		files["go.sum"] = string(sum)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run in a module outside the repository: %v\n%s", err, stderr.Bytes())
	}
	// Thresholds k/8: 0.05 and 0.1 in bin 1, 0.3 and 0.35 in bin 3, 0.5 in
	// bin 4, 0.6 in bin 5, 0.9 and 1 in bin 8.
	const want = "counts [2 2 4 5 6 6 6 8] ecdf [0.25 0.25 0.5 0.625 0.75 0.75 0.75 1]\n"
	if got := stdout.String(); got != want {
		t.Errorf("the outside program printed %q, want %q", got, want)
	}
}
