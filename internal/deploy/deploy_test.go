package deploy

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fast are the transport settings of the tests: loopback only, short backoff.
var fast = p2p.Config{Logger: quiet, Backoff: time.Millisecond, CallTimeout: time.Minute}

const bins = 64

// hugeEpsilon makes the noise vanish (scale ~ 2^-45), as in the simulate tests.
const hugeEpsilon = 1 << 48

// servers is the number of independent full-scale noises in an answer.
const servers = 2

// deployment is two servers on 127.0.0.1 and an analyst identity.
type deployment struct {
	t                  *testing.T
	m                  *manifest.Manifest
	leaderID, helperID *manifest.Identity
	analystID          *manifest.Identity
	operatorID         *manifest.Identity // allowed status only
	leader, helper     *Server
	dir                string
	// tweak, if set, changes the configuration of each server started.
	tweak func(*ServerConfig)
}

func newIdentity(t testing.TB) *manifest.Identity {
	t.Helper()
	id, err := manifest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newDeployment(t *testing.T, epsilon float64, minReports int) *deployment {
	t.Helper()
	return newDeploymentMode(t, epsilon, minReports, manifest.UploadDirect)
}

// newDeploymentMode starts a deployment whose parties upload in mode.
func newDeploymentMode(t *testing.T, epsilon float64, minReports int, mode string) *deployment {
	t.Helper()
	return newDeploymentOf(t, epsilon, minReports, mode, "replace")
}

// newDeploymentOf starts a deployment whose parties upload in mode and
// whose manifest names the neighbouring relation.
func newDeploymentOf(t *testing.T, epsilon float64, minReports int, mode, relation string) *deployment {
	t.Helper()
	return newDeploymentTweaked(t, epsilon, minReports, mode, relation, nil)
}

// newDeploymentTweaked is newDeploymentOf with tweak applied to the
// configuration of every server started.
func newDeploymentTweaked(t *testing.T, epsilon float64, minReports int, mode, relation string, tweak func(*ServerConfig)) *deployment {
	t.Helper()
	return newDeploymentMech(t, manifest.Mech{Name: "tree", Epsilon: epsilon, Neighbours: relation, Allowed: []string{"tree"}}, minReports, mode, tweak)
}

// newDeploymentMech starts a deployment whose manifest has the mechanism
// and policy mech (its budget 4·mech.Epsilon), parties uploading in mode,
// tweak applied to the configuration of every server started.
func newDeploymentMech(t *testing.T, mech manifest.Mech, minReports int, mode string, tweak func(*ServerConfig)) *deployment {
	t.Helper()
	d := &deployment{t: t, leaderID: newIdentity(t), helperID: newIdentity(t), analystID: newIdentity(t), operatorID: newIdentity(t), dir: t.TempDir(), tweak: tweak}
	d.m = &manifest.Manifest{
		Version: manifest.ManifestVersion, Protocol: protocol.Version, Dataset: "test", Backend: string(server.DCF), Upload: mode,
		Leader:     manifest.Endpoint{Public: d.leaderID.Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/1"}},
		Helper:     manifest.Endpoint{Public: d.helperID.Public(), Addrs: []string{"/ip4/127.0.0.1/tcp/2"}},
		Analysts:   []string{d.analystID.PeerID.String()},
		Operators:  []string{d.operatorID.PeerID.String()},
		Grid:       manifest.Grid{Scale: "linear", Min: 0, Max: 1, Bins: bins},
		Payload:    manifest.PayloadLayout(),
		Mechanism:  mech,
		Budget:     manifest.Budget{Epsilon: 4 * mech.Epsilon},
		MinReports: minReports,
	}
	if err := d.m.Check(); err != nil {
		t.Fatal(err)
	}
	d.helper = d.start(server.Helper, "/ip4/127.0.0.1/tcp/0")
	d.m.Helper.Addrs = addrStrings(d.helper.Addrs())
	d.leader = d.start(server.Leader, "/ip4/127.0.0.1/tcp/0")
	d.m.Leader.Addrs = addrStrings(d.leader.Addrs())
	t.Cleanup(func() {
		d.leader.Close()
		d.helper.Close()
	})
	return d
}

func addrStrings(addrs []ma.Multiaddr) []string {
	var s []string
	for _, a := range addrs {
		s = append(s, a.String())
	}
	return s
}

func (d *deployment) start(role server.Role, listen string) *Server {
	d.t.Helper()
	id := d.leaderID
	if role == server.Helper {
		id = d.helperID
	}
	cfg := ServerConfig{
		Role: role, Identity: id, Manifest: d.m, Listen: []ma.Multiaddr{ma.StringCast(listen)},
		Store: filepath.Join(d.dir, role.String()+".db"), Logger: quiet, Transport: fast,
	}
	if d.tweak != nil {
		d.tweak(&cfg)
	}
	s, err := StartServer(cfg)
	if err != nil {
		d.t.Fatalf("starting the %s: %v", role, err)
	}
	return s
}

// restartBoth stops both servers and starts them again on their stores
// and addresses.
func (d *deployment) restartBoth() {
	d.t.Helper()
	for _, s := range []**Server{&d.helper, &d.leader} {
		role, listen := (*s).cfg.Role, (*s).Addrs()[0].String()
		if err := (*s).Close(); err != nil {
			d.t.Fatal(err)
		}
		*s = d.start(role, listen)
	}
}

// readRelease reads release id as the deployment's analyst.
func (d *deployment) readRelease(id payload.ReleaseID) (*analyst.ECDF, error) {
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return a.ReadRelease(context.Background(), id)
}

func (d *deployment) newParty() *client.Party {
	d.t.Helper()
	p, err := client.NewParty(d.m, nil, fast)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { p.Close() })
	return p
}

func (d *deployment) query() *analyst.ECDF {
	d.t.Helper()
	e, err := d.analyst().ECDF(context.Background())
	if err != nil {
		d.t.Fatalf("analyst query: %v", err)
	}
	return e
}

// plainCounts is the in-process reference: the exact prefix counts of
// the instances on the manifest's grid.
func plainCounts(t *testing.T, m *manifest.Manifest, inst []party.Instance) []int64 {
	t.Helper()
	g, err := m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]int, len(inst))
	for k, x := range inst {
		if b[k], err = g.Bin(x.Score); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := ecdf.Histogram(b, g.Len())
	if err != nil {
		t.Fatal(err)
	}
	return ecdf.PrefixCounts(hist)
}

func checkExact(t *testing.T, got *analyst.ECDF, want []int64) {
	t.Helper()
	if got.N != want[len(want)-1] {
		t.Fatalf("release over %d reports, want %d", got.N, want[len(want)-1])
	}
	for i := range want {
		if got.Counts[i] != want[i] {
			t.Fatalf("prefix %d: released count %d, plain count %d", i+1, got.Counts[i], want[i])
		}
	}
}

// TestEndToEnd: 120 parties, each its own libp2p host, upload to both
// servers over Noise on 127.0.0.1; at ε = 2^48 the analyst's counts
// equal the plain counts exactly.
func TestEndToEnd(t *testing.T) {
	const n = 120
	d := newDeployment(t, hugeEpsilon, n)
	inst := instances(n, 1)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for _, x := range inst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := client.NewParty(d.m, nil, fast)
			if err != nil {
				errs <- err
				return
			}
			defer p.Close()
			_, err = p.Submit(context.Background(), x)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, want := d.query(), plainCounts(t, d.m, inst)
	checkExact(t, got, want)
	// Smoothing the exact curve changes nothing: the quantiles are the
	// exact ones.
	ps := []float64{0.1, 0.5, 0.9}
	if err := got.Smooth("l2", ps); err != nil {
		t.Fatal(err)
	}
	exact := make([]float64, len(want))
	for i, c := range want {
		exact[i] = float64(c) / n
	}
	wantQ, err := ecdf.Quantiles(ecdf.CurveAt(exact), got.Grid(), ps)
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range ps {
		if q := got.Quantiles[strconv.FormatFloat(p, 'g', -1, 64)]; q != wantQ[j] {
			t.Errorf("%g-quantile %g, exact %g", p, q, wantQ[j])
		}
	}
	if err := got.Smooth("l3", ps); err == nil || !strings.Contains(err.Error(), `unknown smoothing method "l3"`) {
		t.Errorf("smoothing method l3: %v", err)
	}
}

// TestEndToEndEpsilonOne: at ε = 1 the pipeline completes and the error
// of F̂ is of the size the mechanism's variance predicts.
func TestEndToEndEpsilonOne(t *testing.T) {
	const n = 100
	d := newDeployment(t, 1, n)
	p := d.newParty()
	inst := instances(n, 2)
	for _, x := range inst {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	got := d.query()
	want := plainCounts(t, d.m, inst)
	if got.N != n || got.Epsilon != 1 || got.StdDev <= 0 {
		t.Fatalf("release: n=%d ε=%g s.d.=%g", got.N, got.Epsilon, got.StdDev)
	}
	// Mean squared error over the prefixes against the mean variance
	// (StdDev²): a factor 25 leaves room for one heavy-tailed draw.
	var mse float64
	for i := range want {
		e := got.Raw[i] - float64(want[i])/n
		mse += e * e
	}
	mse /= float64(len(want))
	if mse > 25*got.StdDev*got.StdDev || math.IsNaN(mse) {
		t.Fatalf("mean squared error %g, predicted %g", mse, got.StdDev*got.StdDev)
	}
	// Every smoothing gives a non-decreasing curve in [0, 1] (dp-ecdf
	// Eq. 3), so the quantiles read from it are ordered.
	ps := []float64{0.1, 0.5, 0.9}
	for _, method := range []string{"l1", "l2", "tree-l2"} {
		if err := got.Smooth(method, ps); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		if !slices.IsSorted(got.Smoothed) || got.Smoothed[0] < 0 || got.Smoothed[len(got.Smoothed)-1] > 1 {
			t.Errorf("%s: smoothed curve not non-decreasing in [0, 1]: %v", method, got.Smoothed)
		}
		if q := got.Quantiles; !(q["0.1"] <= q["0.5"] && q["0.5"] <= q["0.9"]) {
			t.Errorf("%s: quantiles out of order: %v", method, q)
		}
	}
}

// TestLeaderRestart: the leader is stopped after k acknowledged reports
// and restarted from its store: all k are there, retried uploads (an
// acknowledgement lost in transit) are dropped as duplicates, the
// budget spent is kept, and the release counts every report once.
func TestLeaderRestart(t *testing.T) {
	const k, more = 30, 20
	d := newDeployment(t, hugeEpsilon, k+more)
	p := d.newParty()
	inst := instances(k+more, 3)
	reports := make([]*client.Report, len(inst))
	for j, x := range inst {
		var err error
		if reports[j], err = p.NewReport(x); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range reports[:k] {
		if _, err := p.Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	// A lost acknowledgement: the party sends the same report again.
	if dup, err := p.Send(context.Background(), reports[0]); err != nil || !dup {
		t.Fatalf("resending an acknowledged report: duplicate=%v, %v", dup, err)
	}

	listen := d.leader.Addrs()[0].String()
	if err := d.leader.Close(); err != nil {
		t.Fatal(err)
	}
	d.leader = d.start(server.Leader, listen)
	if got, err := d.leader.NumReports(); got != k || err != nil {
		t.Fatalf("after the restart the leader holds %d reports (%v), want %d", got, err, k)
	}
	for _, r := range reports[:5] { // retries after the restart
		if dup, err := p.Send(context.Background(), r); err != nil || !dup {
			t.Fatalf("retry after the restart: duplicate=%v, %v", dup, err)
		}
	}
	for _, r := range reports[k:] {
		if _, err := p.Send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst))

	listen = d.leader.Addrs()[0].String()
	d.leader.Close()
	d.leader = d.start(server.Leader, listen)
	spent, err := d.leader.store.Spent(d.m.Dataset)
	if err != nil || spent.Epsilon != hugeEpsilon {
		t.Fatalf("budget spent after a second restart: %+v, %v; want ε=%g", spent, err, float64(hugeEpsilon))
	}
}

// TestUnknownPeersRefused: a query from a peer that is not an analyst of
// the manifest and a peer message to the helper from anyone but the
// leader are refused before reaching the server logic.
func TestUnknownPeersRefused(t *testing.T) {
	d := newDeployment(t, 1, 1)
	stranger := newIdentity(t)
	if _, err := analyst.NewAnalyst(d.m, stranger, fast); !errors.Is(err, analyst.ErrNotAnalyst) {
		t.Fatal("NewAnalyst accepted a key that is not in the manifest")
	}
	book, err := d.m.Book(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []*manifest.Identity{stranger, d.analystID} {
		tc := fast
		tc.Key, tc.Peers = key.Key, book
		h, err := p2p.New(tc)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		req := protocol.Encode(&protocol.Query{Dataset: d.m.Dataset, Component: payload.Count, Prefixes: []int{1}})
		if key == stranger {
			_, err = h.Conn(p2p.QueryProtocol).Call(context.Background(), manifest.LeaderName, req)
			if !p2p.IsRefused(err) {
				t.Errorf("query from an unknown peer: %v, want a refusal", err)
			}
		}
		_, err = h.Conn(p2p.PeerProtocol).Call(context.Background(), manifest.HelperName, req)
		if !p2p.IsRefused(err) {
			t.Errorf("peer message to the helper from %s: %v, want a refusal", key.PeerID, err)
		}
	}
}

// TestReportProtocolCarriesOnlyUploads: a party cannot create releases
// through the report protocol.
func TestReportProtocolCarriesOnlyUploads(t *testing.T) {
	d := newDeployment(t, 1, 1)
	p := d.newParty()
	req := &protocol.CreateRelease{Dataset: d.m.Dataset, Release: payload.ReleaseID{1}, Components: []payload.Component{payload.Count}}
	_, err := protocol.Call[*protocol.ReleaseCreated](context.Background(), p.Host().Conn(p2p.ReportProtocol), manifest.LeaderName, req)
	if err == nil {
		t.Fatal("a release request over the report protocol was accepted")
	}
}

// instances returns n seeded instances: label y ~ Bernoulli(0.3), score
// uniform on [0, 1), probability = score.
func instances(n int, seed uint64) []party.Instance {
	rng := rand.New(rand.NewPCG(seed, 7))
	inst := make([]party.Instance, n)
	for k := range inst {
		y := 0
		if rng.Float64() < 0.3 {
			y = 1
		}
		s := rng.Float64()
		inst[k] = party.Instance{Score: s, Label: y, Probability: s, HasProbability: true}
	}
	return inst
}

// TestReleaseReadAfterRestart: a release at ε = 1 read, both servers
// restarted from their stores, read again by ID — by an analyst whose
// manifest now names another ε — gives identical noisy counts under the
// release's own mechanism, no budget spent by the re-read, and an unknown
// ID is refused.
func TestReleaseReadAfterRestart(t *testing.T) {
	const n = 20
	d := newDeployment(t, 1, n)
	p := d.newParty()
	for _, x := range instances(n, 4) {
		if _, err := p.Submit(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	first := d.query()
	if !first.Charged {
		t.Fatal("a new release is not marked as charged")
	}
	id, err := analyst.ParseReleaseID(first.Stored.Release)
	if err != nil {
		t.Fatal(err)
	}
	d.restartBoth()
	edited := *d.m
	edited.Mechanism.Epsilon = 7
	a, err := analyst.NewAnalyst(&edited, d.analystID, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	again, err := a.ReadRelease(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if again.Charged || again.N != n || !slices.Equal(again.Counts, first.Counts) {
		t.Fatalf("re-read after restart: charged=%v n=%d counts %v; want uncharged, n=%d, counts %v", again.Charged, again.N, again.Counts, n, first.Counts)
	}
	if again.Epsilon != first.Epsilon || again.Mechanism != first.Mechanism || again.StdDev != first.StdDev || again.Guarantee != first.Guarantee {
		t.Errorf("re-read states ε=%g, %s, s.d. %g; the release was ε=%g, %s, s.d. %g", again.Epsilon, again.Mechanism, again.StdDev, first.Epsilon, first.Mechanism, first.StdDev)
	}
	for _, s := range []*Server{d.leader, d.helper} {
		if spent, err := s.store.Spent(d.m.Dataset); err != nil || spent.Epsilon != 1 {
			t.Errorf("%s spent %+v (%v) after the re-read, want ε=1", s.cfg.Role, spent, err)
		}
	}
	if second := d.query(); slices.Equal(second.Counts, first.Counts) {
		t.Fatal("a new release at ε = 1 repeats the first one's noisy counts")
	}
	if _, err := a.ReadRelease(context.Background(), payload.ReleaseID{1}); !errors.Is(err, server.ErrUnknownRelease) {
		t.Fatalf("reading an unknown release: %v", err)
	}
}

func TestParseReleaseID(t *testing.T) {
	id := payload.ReleaseID{0xab, 1}
	if got, err := analyst.ParseReleaseID(id.String()); got != id || err != nil {
		t.Fatalf("ParseReleaseID(%s) = %v, %v", id, got, err)
	}
	for _, bad := range []string{"", "zz", id.String()[2:], id.String() + "00"} {
		t.Run(bad, func(t *testing.T) {
			if _, err := analyst.ParseReleaseID(bad); err == nil {
				t.Errorf("ParseReleaseID(%q) accepted", bad)
			}
		})
	}
}

// TestDeploymentEnforcesManifestPolicy: an analyst of a deployment asks
// the leader for releases outside the manifest's policy (add/remove on a
// replace-one dataset, a mechanism the manifest does not allow, δ > 0
// on a pure one); the servers refuse each and neither charges anything.
func TestDeploymentEnforcesManifestPolicy(t *testing.T) {
	d := newDeployment(t, 1, 1)
	if _, err := d.newParty().Submit(context.Background(), instances(1, 1)[0]); err != nil {
		t.Fatal(err)
	}
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	params, err := d.m.MechanismParams()
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*mechanism.Params){
		"add/remove":          func(p *mechanism.Params) { p.Relation = mechanism.AddRemove },
		"a mechanism refused": func(p *mechanism.Params) { p.Name = "kary" },
		"δ > 0":               func(p *mechanism.Params) { p.Delta = 1e-6 },
	} {
		t.Run(name, func(t *testing.T) {
			p := params
			edit(&p)
			if _, err := a.Remote().NewRelease(context.Background(), aggregation.ReleaseSpec{Mechanism: p}); !errors.Is(err, server.ErrPolicy) {
				t.Errorf("a release with %s: %v, want %q", name, err, server.ErrPolicy)
			}
		})
	}
	for _, s := range []*Server{d.leader, d.helper} {
		if spent, err := s.store.Spent(d.m.Dataset); err != nil || spent != (ledger.Budget{}) {
			t.Errorf("%s spent %+v (%v) on refused releases", s.cfg.Role, spent, err)
		}
	}
}
