package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// startWith starts the deployment's server of role on manifest m (a copy
// of the deployment's, perhaps edited) and its own store; nil and the
// error if it does not start.
func (d *deployment) startWith(role server.Role, m *manifest.Manifest, cfg ServerConfig) (*Server, error) {
	d.t.Helper()
	cfg.Role, cfg.Identity, cfg.Manifest = role, d.leaderID, m
	if role == server.Helper {
		cfg.Identity = d.helperID
	}
	if cfg.Listen == nil {
		cfg.Listen = []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")}
	}
	if cfg.Store == "" {
		cfg.Store = filepath.Join(d.dir, role.String()+"-2.db")
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	cfg.Transport = fast
	s, err := StartServer(cfg)
	if err == nil {
		d.t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// TestLeaderRefusesHelperWithAnotherManifest: a leader at 64 bins whose
// helper runs a manifest of 32 bins does not start, saying the grid
// differs. A leader that started while its helper was down finds out at
// the next release, which is refused naming the release and the grid,
// as is every upload at either server, until the helper runs the
// leader's manifest again and the leader's next exchange finds it.
func TestLeaderRefusesHelperWithAnotherManifest(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	other := *d.m
	other.Grid.Bins = 32
	wantGrid := func(who string, err error) {
		t.Helper()
		if !errors.Is(err, server.ErrManifestMismatch) || !strings.Contains(err.Error(), "grid differ") {
			t.Fatalf("%s: %v, want %v naming the grid", who, err, server.ErrManifestMismatch)
		}
	}
	helperAt, leaderStore := d.helper.Addrs(), filepath.Join(d.dir, "leader.db")
	restartHelper := func(m *manifest.Manifest, store string) {
		t.Helper()
		d.helper.Close()
		var err error // at the same address: the leader's manifest names it
		if d.helper, err = d.startWith(server.Helper, m, ServerConfig{Listen: helperAt, Store: filepath.Join(d.dir, store)}); err != nil {
			t.Fatal(err)
		}
	}

	restartHelper(&other, "helper-32.db")
	d.leader.Close()
	leader, err := d.startWith(server.Leader, d.m, ServerConfig{Store: leaderStore})
	wantGrid("a leader starting against it", err)
	if leader != nil {
		t.Fatal("the leader started")
	}

	d.helper.Close()
	if d.leader, err = d.startWith(server.Leader, d.m, ServerConfig{Store: leaderStore}); err != nil {
		t.Fatalf("a leader whose helper is down: %v", err)
	}
	d.m.Leader.Addrs = addrStrings(d.leader.Addrs())
	restartHelper(&other, "helper-32.db")
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = a.ECDF(context.Background())
	wantGrid("a release", err)
	if !strings.Contains(err.Error(), "nothing recorded or charged") {
		t.Errorf("the refused release does not say nothing was charged: %v", err)
	}
	_, err = d.newParty().Submit(context.Background(), party.Instance{Score: 0.5, Label: 1})
	wantGrid("an upload", err)

	// The next exchange (a release, or the leader's periodic check)
	// clears the refusal.
	restartHelper(d.m, "helper.db")
	if err := d.leader.srv.CheckPeer(context.Background()); err != nil { // what watchHelper runs
		t.Fatalf("the leader's check once the helper runs its manifest: %v", err)
	}
	if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: 0.5, Label: 1}); err != nil {
		t.Fatalf("an upload once the helper runs the leader's manifest: %v", err)
	}
	if _, err := a.ECDF(context.Background()); err != nil {
		t.Fatalf("a release once the helper runs the leader's manifest: %v", err)
	}
}

// TestBudgetChangeMustBeAccepted: a server restarted on its store, whose
// ledger has charged a release, with a manifest of another total budget
// refuses to start (ErrBudgetChanged, naming both budgets and the flag),
// and starts with AcceptBudgetChange, logging the change at WARN with
// the old and the new budget; the next start with the new budget needs
// no flag. Before any charge, a change needs no flag.
func TestBudgetChangeMustBeAccepted(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	store, at := filepath.Join(d.dir, "helper.db"), d.helper.Addrs()
	fresh := *d.m
	fresh.Budget.Epsilon *= 3
	for _, m := range []*manifest.Manifest{&fresh, d.m} {
		d.helper.Close()
		var err error
		if d.helper, err = d.startWith(server.Helper, m, ServerConfig{Store: store, Listen: at}); err != nil {
			t.Fatalf("a budget change over a ledger that charged nothing: %v", err)
		}
	}
	if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: 0.5, Label: 1}); err != nil {
		t.Fatal(err)
	}
	d.query() // charges both ledgers
	d.helper.Close()
	larger := *d.m
	larger.Budget.Epsilon *= 2
	_, err := d.startWith(server.Helper, &larger, ServerConfig{Store: store})
	if !errors.Is(err, ErrBudgetChanged) || !strings.Contains(err.Error(), fmt.Sprintf("ε=%g", larger.Budget.Epsilon)) {
		t.Fatalf("a restart with a doubled budget: %v, want %v naming the new budget", err, ErrBudgetChanged)
	}
	var log bytes.Buffer
	s, err := d.startWith(server.Helper, &larger, ServerConfig{Store: store, AcceptBudgetChange: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("a restart with the change accepted: %v", err)
	}
	s.Close()
	want := []string{"level=WARN", "total budget changed", "old_epsilon=" + formatG(d.m.Budget.Epsilon), "new_epsilon=" + formatG(larger.Budget.Epsilon)}
	for _, w := range want {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, log.String())
		}
	}
	if _, err := d.startWith(server.Helper, &larger, ServerConfig{Store: store}); err != nil {
		t.Fatalf("the next restart with the accepted budget: %v", err)
	}
}

func formatG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// TestLeaderRefusesHelperWithoutItsUploadAddrs: a leader whose manifest
// has the parties upload sealed to both servers does not start against a
// helper whose manifest has no upload addresses (every upload would fail
// at the helper), saying the uploads differ.
func TestLeaderRefusesHelperWithoutItsUploadAddrs(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	sealed := *d.m
	sealed.Leader.UploadAddr, sealed.Helper.UploadAddr = "127.0.0.1:7401", "127.0.0.1:7402"
	d.leader.Close()
	_, err := d.startWith(server.Leader, &sealed, ServerConfig{UploadListen: "127.0.0.1:0"})
	if !errors.Is(err, server.ErrManifestMismatch) || !strings.Contains(err.Error(), "uploads differ") {
		t.Fatalf("a sealed leader against a libp2p-only helper: %v, want %v naming the uploads", err, server.ErrManifestMismatch)
	}
}
