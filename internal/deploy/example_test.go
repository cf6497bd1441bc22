package deploy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// Two servers on 127.0.0.1, three parties and an analyst: at a huge ε
// the released prefix counts are the exact ones.
func Example() {
	dir, _ := os.MkdirTemp("", "deploy")
	defer os.RemoveAll(dir)
	quiet := p2p.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	leaderID, _ := manifest.NewIdentity()
	helperID, _ := manifest.NewIdentity()
	analystID, _ := manifest.NewIdentity()
	m := &manifest.Manifest{
		Version: manifest.ManifestVersion, Protocol: protocol.Version, Dataset: "example", Backend: "dcf", Upload: manifest.UploadDirect,
		Leader:     manifest.Endpoint{Public: leaderID.Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Helper:     manifest.Endpoint{Public: helperID.Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Analysts:   []string{analystID.PeerID.String()},
		Grid:       manifest.Grid{Scale: "linear", Min: 0, Max: 1, Bins: 4},
		Payload:    manifest.PayloadLayout(),
		Mechanism:  manifest.Mech{Name: "tree", Epsilon: 1 << 48, Neighbours: "replace", Allowed: []string{"tree"}},
		Budget:     manifest.Budget{Epsilon: 1 << 48},
		MinReports: 3,
	}
	start := func(role server.Role, id *manifest.Identity) *deploy.Server {
		s, err := deploy.StartServer(deploy.ServerConfig{
			Role: role, Identity: id, Manifest: m, Listen: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
			Store: filepath.Join(dir, role.String()+".db"), Logger: quiet.Logger, Transport: quiet,
		})
		if err != nil {
			panic(err)
		}
		return s
	}
	helper := start(server.Helper, helperID)
	defer helper.Close()
	m.Helper.Addrs = []string{helper.Addrs()[0].String()}
	leader := start(server.Leader, leaderID)
	defer leader.Close()
	m.Leader.Addrs = []string{leader.Addrs()[0].String()}

	records := []party.Instance{{Score: 0.1}, {Score: 0.6, Label: 1}, {Score: 0.9}}
	if _, err := client.SubmitAll(context.Background(), m, records, quiet, 3, true); err != nil {
		panic(err)
	}
	a, err := analyst.NewAnalyst(m, analystID, quiet)
	if err != nil {
		panic(err)
	}
	defer a.Close()
	e, err := a.ECDF(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(e.N, e.Counts)
	// Output: 3 [1 1 2 3]
}
