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
// packages, runs the leader and the helper as two embedded servers, each
// answering HTTP requests on its own loopback TCP socket, uploads eight
// records as parties over those sockets (verified DCF reports), has the
// servers verify them and reads back, as the analyst, the private ECDF of
// a release. Its transport is its own: core.Conn and server.Server.Handle
// are the whole seam (it trusts the caller's From header, which a real
// deployment would authenticate).
const outsideMain = `package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// httpConn is a core.Conn over HTTP: a call is one POST to the peer's
// address.
type httpConn struct {
	self  core.PeerID
	addrs map[core.PeerID]string
}

func (c httpConn) Self() core.PeerID { return c.self }

func (c httpConn) Call(ctx context.Context, to core.PeerID, req []byte) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, "POST", "http://"+c.addrs[to]+"/", bytes.NewReader(req))
	if err != nil {
		return nil, err
	}
	r.Header.Set("From", string(c.self))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// serve answers the requests to srv on l.
func serve(l net.Listener, srv *server.Server) {
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(srv.Handle(r.Context(), core.PeerID(r.Header.Get("From")), req))
	}))
}

func main() {
	ctx := context.Background()
	const bins = 8
	// ε = 2^48: the noise is zero with overwhelming probability, so the
	// exact ECDF shows through.
	budget := mechanism.Budget{Epsilon: 1 << 48}
	ds := []server.Dataset{{Name: "outside", Backend: server.DCF, Bins: bins, Budget: budget, MinReports: 5}}
	key := [32]byte{1, 2, 3}
	addrs := map[core.PeerID]string{}
	var listeners []net.Listener
	for _, name := range []core.PeerID{"leader", "helper"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		addrs[name] = l.Addr().String()
		listeners = append(listeners, l)
	}
	conn := func(self core.PeerID) core.Conn { return httpConn{self, addrs} }
	leader, err := server.New(server.Config{Role: server.Leader, Peer: "helper", Conn: conn("leader"), Ledger: server.NewMemoryLedger(), Datasets: ds, VerifyKey: key})
	check(err)
	helper, err := server.New(server.Config{Role: server.Helper, Peer: "leader", Ledger: server.NewMemoryLedger(), Datasets: ds, VerifyKey: key})
	check(err)
	serve(listeners[0], leader)
	serve(listeners[1], helper)

	g, err := ecdf.NewLinearGrid(0, 1, bins)
	check(err)
	for k, s := range []float64{0.05, 0.1, 0.3, 0.35, 0.5, 0.6, 0.9, 1} {
		p, err := party.New(party.Instance{Score: s, Label: 1}, g)
		check(err)
		to := party.Servers{Conn: conn(core.PeerID(fmt.Sprint("party", k))), Leader: "leader", Helper: "helper", Dataset: "outside"}
		check(p.UploadVerifiedKeys(ctx, to))
	}
	check(leader.Verify(ctx))

	analyst, err := remote.New(server.DCF, conn("analyst"), "leader", "outside")
	check(err)
	rel, err := analyst.NewRelease(ctx, aggregation.ReleaseSpec{Mechanism: mechanism.Params{Name: "tree", Bins: bins, Epsilon: 1 << 48, Relation: mechanism.ReplaceOne}})
	check(err)
	e, err := analysis.QueryECDF(ctx, analyst, rel, g, analysis.AllPrefixes(bins), 0)
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
// deployment of two embedded servers over loopback TCP sockets. The module cache is used offline
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
