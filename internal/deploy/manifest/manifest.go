package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// ManifestVersion is the version of the manifest format. Version 2
// pins the dataset's privacy policy (Mech: neighbours, allowed, max_delta,
// max_epsilon), which version 1 left to the analyst's requests. Version
// 3: a dcf deployment verifies every report (its parties upload verified
// DCF shares, the probability among them), where version 2's uploaded
// bare DCF keys; a server refuses a store holding such keys
// (ErrUnverifiedStore).
const ManifestVersion = 3

// UploadDirect is the upload mode in which a party sends each server its
// own DCF key directly, over a Noise channel to that server.
const UploadDirect = "direct"

// UploadRelay is the upload mode in which a party talks to the leader
// only: it sends the leader its own DCF key and the helper's key sealed
// to the helper's HPKE public key (RFC 9180, as IETF DAP's input
// shares), which the leader relays to the helper without being able to
// read it.
const UploadRelay = "relay"

// The names of the two servers in the protocol and the address book.
const (
	LeaderName transport.PeerID = "leader"
	HelperName transport.PeerID = "helper"
)

// Manifest is the public description of one deployment that every
// participant holds: who the servers and analysts are (pinned by peer
// ID), where the servers listen, and the dataset's grid, payload,
// privacy policy and budget.
type Manifest struct {
	Version  int      `json:"version"`
	Protocol int      `json:"protocol"` // protocol.Version
	Dataset  string   `json:"dataset"`
	Backend  string   `json:"backend"` // "dcf" or "additive": parties upload once and go offline
	Upload   string   `json:"upload"`  // UploadDirect or UploadRelay
	Leader   Endpoint `json:"leader"`
	Helper   Endpoint `json:"helper"`
	Analysts []string `json:"analysts"` // peer IDs allowed to create releases and query
	// Operators are peer IDs allowed fedecdf status only, with the report
	// counts it withholds from analysts under add/remove (optional).
	Operators  []string `json:"operators,omitempty"`
	Grid       Grid     `json:"grid"`
	Payload    []string `json:"payload"` // component names, in protocol order
	Mechanism  Mech     `json:"mechanism"`
	Budget     Budget   `json:"budget"`
	MinReports int      `json:"min_reports"`
}

// Endpoint is one server: its pinned identity, its libp2p addresses,
// and optionally the host:port of its sealed-upload listener
// (UploadAddr): parties then upload to it over one TCP connection per
// report, HPKE-sealed to its key (package internal/deploy/sealed),
// instead of over libp2p. A server run by several processes (on one
// PostgreSQL database) may list the further processes' sealed-upload
// addresses in MoreUploadAddrs: a party spreads its uploads over all of
// them and retries another when one fails (UploadAddrs).
type Endpoint struct {
	Public
	Addrs           []string `json:"addrs"`
	UploadAddr      string   `json:"upload_addr,omitempty"`
	MoreUploadAddrs []string `json:"more_upload_addrs,omitempty"`
}

// UploadAddrs returns every sealed-upload address of the server,
// UploadAddr first, or nil when it has none.
func (e Endpoint) UploadAddrs() []string {
	if e.UploadAddr == "" {
		return nil
	}
	return append([]string{e.UploadAddr}, e.MoreUploadAddrs...)
}

// Grid is the public grid τ_1 < … < τ_N (ecdf.NewGrid).
type Grid struct {
	Scale string  `json:"scale"` // linear or log
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Bins  int     `json:"bins"`
}

// Mech is the dataset's privacy policy, which both servers enforce on
// every release whoever asks (server.Policy), and the release the
// analyst commands ask for within it. The policy: Neighbours, the
// neighbouring relation every release is private under and charged in
// ("replace": n public, or "addremove"); Allowed, the mechanisms a
// release may use (mechanism.Names; "auto" lets the servers choose);
// MaxDelta, the largest δ per privacy unit of a release (0: pure ε-DP
// releases only); MaxEpsilon, the largest ε per privacy unit (0: the
// budget alone bounds it). The release: Name (one of Allowed), ε and δ
// per payload component released (per privacy unit), and K for kary.
type Mech struct {
	Name       string   `json:"name"`
	Epsilon    float64  `json:"epsilon"`
	Delta      float64  `json:"delta"`
	K          int      `json:"k,omitempty"`
	Neighbours string   `json:"neighbours"`
	Allowed    []string `json:"allowed"`
	MaxDelta   float64  `json:"max_delta"`
	MaxEpsilon float64  `json:"max_epsilon,omitempty"`
}

// Budget is the total (ε, δ) of all releases of the dataset, enforced by
// each server's ledger.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// check refuses a budget under which the analysts' release could never
// run.
func (b Budget) check(r Mech) error {
	switch {
	case !(b.Epsilon > 0):
		return fmt.Errorf("budget epsilon %g is not positive: no release could ever run", b.Epsilon)
	case b.Delta < 0 || b.Delta >= 1:
		return fmt.Errorf("budget delta %g is outside [0, 1)", b.Delta)
	case r.Epsilon > b.Epsilon:
		return fmt.Errorf("release epsilon %g exceeds the total budget epsilon %g: no release could ever run; lower the release's or raise the budget's epsilon", r.Epsilon, b.Epsilon)
	case r.Delta > b.Delta:
		return fmt.Errorf("release delta %g exceeds the total budget delta %g: no release could ever run; lower the release's or raise the budget's delta", r.Delta, b.Delta)
	}
	return nil
}

// PayloadLayout returns the protocol's payload component names in order.
func PayloadLayout() []string {
	names := make([]string, payload.NumComponents)
	for c := range payload.Component(payload.NumComponents) {
		names[c] = c.String()
	}
	return names
}

// ReadManifest reads and checks a manifest file.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return &m, nil
}

// Write writes the manifest to path (refusing to overwrite).
func (m *Manifest) Write(path string) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return writeNewJSON(path, 0o644, m)
}

// Sentinel errors of Manifest.Check, for callers to branch on (the
// command line names the fedecdf command that fixes each).
var (
	// ErrManifestVersion: the manifest's version or protocol is not this
	// fedecdf's; the manifest must be written again.
	ErrManifestVersion = errors.New("not supported")
	// ErrNoAnalysts: the manifest names no analyst.
	ErrNoAnalysts = errors.New("no analysts")
	// ErrSharedKey: an analyst's or operator's key is also a server's
	// (or an analyst's); each needs a key of its own.
	ErrSharedKey = errors.New("needs a key of its own")
)

// Check validates every field.
func (m *Manifest) Check() error {
	switch {
	case m.Version != ManifestVersion:
		return fmt.Errorf("version %d is %w (want %d): write the manifest again with this fedecdf (version 2 pins the neighbouring relation, mechanisms and δ the servers accept; version 3 verifies a dcf deployment's reports, so the servers of an older dcf deployment start on new store files and its parties upload again)", m.Version, ErrManifestVersion, ManifestVersion)
	case m.Protocol != protocol.Version:
		return fmt.Errorf("protocol %d is %w (want %d): write the manifest again with this fedecdf, and start its servers on new store files", m.Protocol, ErrManifestVersion, protocol.Version)
	case m.Backend != string(server.DCF) && m.Backend != string(server.Additive):
		return fmt.Errorf("backend %q: want %q (verified DCF keys, probability included) or %q (verified one-hot histograms; no probability component)", m.Backend, server.DCF, server.Additive)
	case m.Upload != UploadDirect && m.Upload != UploadRelay:
		return fmt.Errorf("upload %q: want %q or %q", m.Upload, UploadDirect, UploadRelay)
	case !slices.Equal(m.Payload, PayloadLayout()):
		return fmt.Errorf("payload %v: this protocol version's layout is %v", m.Payload, PayloadLayout())
	case m.MinReports < 1:
		return fmt.Errorf("min_reports %d is not positive", m.MinReports)
	}
	for name, e := range map[transport.PeerID]Endpoint{LeaderName: m.Leader, HelperName: m.Helper} {
		if err := e.check(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if m.Leader.PeerID == m.Helper.PeerID {
		return fmt.Errorf("leader and helper have the same peer ID %s", m.Leader.PeerID)
	}
	for _, a := range m.Leader.Addrs {
		if slices.Contains(m.Helper.Addrs, a) {
			return fmt.Errorf("leader and helper both at %s: give each server an address of its own (another port or host)", a)
		}
	}
	for _, a := range m.Leader.UploadAddrs() {
		if slices.Contains(m.Helper.UploadAddrs(), a) {
			return fmt.Errorf("leader and helper both have upload address %s: give each server an upload address of its own (another port or host)", a)
		}
	}
	if len(m.Analysts) == 0 {
		return fmt.Errorf("%w: nobody could create a release; name at least one analyst's public key", ErrNoAnalysts)
	}
	for _, a := range m.Analysts {
		if _, err := peer.Decode(a); err != nil {
			return fmt.Errorf("analyst %q: %w", a, err)
		}
		if a == m.Leader.PeerID || a == m.Helper.PeerID {
			return fmt.Errorf("analyst %s is a server's key: each analyst %w", a, ErrSharedKey)
		}
	}
	if err := m.checkOperators(); err != nil {
		return err
	}
	if _, err := m.NewGrid(); err != nil {
		return fmt.Errorf("grid: %w", err)
	}
	if _, err := m.MechanismParams(); err != nil {
		return fmt.Errorf("mechanism: %w", err)
	}
	if err := m.Budget.check(m.Mechanism); err != nil {
		return err
	}
	if m.Dataset == "" || len(m.Dataset) > protocol.MaxNameLen {
		return fmt.Errorf("dataset name %q is empty or longer than %d bytes", m.Dataset, protocol.MaxNameLen)
	}
	return nil
}

// checkOperators refuses an operator key that is not a peer ID, or is a
// server's or an analyst's: an analyst with an operator's key would see
// the report counts status withholds from analysts under add/remove.
func (m *Manifest) checkOperators() error {
	for _, o := range m.Operators {
		if _, err := peer.Decode(o); err != nil {
			return fmt.Errorf("operator %q: %w", o, err)
		}
		if o == m.Leader.PeerID || o == m.Helper.PeerID || slices.Contains(m.Analysts, o) {
			return fmt.Errorf("operator %s is a server's or an analyst's key: each operator %w", o, ErrSharedKey)
		}
	}
	return nil
}

func (e Endpoint) check() error {
	if err := e.Public.check(); err != nil {
		return err
	}
	if len(e.Addrs) == 0 {
		return fmt.Errorf("no addresses")
	}
	if _, err := e.addrInfo(); err != nil {
		return err
	}
	if e.UploadAddr == "" && len(e.MoreUploadAddrs) > 0 {
		return fmt.Errorf("more_upload_addrs %v without an upload_addr: give the first address as upload_addr", e.MoreUploadAddrs)
	}
	addrs := e.UploadAddrs()
	for i, a := range addrs {
		if err := checkUploadAddr(a); err != nil {
			return err
		}
		if slices.Contains(addrs[:i], a) {
			return fmt.Errorf("upload address %s is listed twice: list each process's address once", a)
		}
	}
	return nil
}

// checkUploadAddr returns why the upload address s can never be
// dialled, or nil: it must be HOST:PORT with an IP address others can
// reach or a DNS name, and a TCP port other than 0.
func checkUploadAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("upload_addr %q is not HOST:PORT (%v): write e.g. 10.0.0.1:7401", s, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("upload_addr %q: port %q is not a TCP port from 1 to 65535: write the port the server's sealed-upload listener is reached at, e.g. %s:7401", s, port, host)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("upload_addr %q: %q is no address anyone can dial: write the address the parties reach this server at, e.g. 10.0.0.1:7401", s, host)
	}
	return nil
}

func (e Endpoint) addrInfo() (peer.AddrInfo, error) {
	id, err := peer.Decode(e.PeerID)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("peer_id %q: %w", e.PeerID, err)
	}
	info := peer.AddrInfo{ID: id}
	for _, s := range e.Addrs {
		a, err := dialAddr(s)
		if err != nil {
			return info, err
		}
		info.Addrs = append(info.Addrs, a)
	}
	return info, nil
}

// dialExample is how an address in the manifest is written.
const dialExample = "/ip4/10.0.0.1/tcp/4001 (or /ip6/…/tcp/PORT, /dns/HOST/tcp/PORT)"

// dialAddr parses a server's address as the manifest gives it to
// everyone who dials the server: an IP address others can reach (not
// the unspecified 0.0.0.0 or ::, which a server may listen on but no
// one can dial) or a DNS name, then a TCP port other than 0 (the one
// transport this fedecdf has), and nothing else. Its errors name the
// address, say why it can never be dialled, and what to write instead.
func dialAddr(s string) (ma.Multiaddr, error) {
	a, err := ma.NewMultiaddr(s)
	if err != nil {
		return nil, fmt.Errorf("address %q is not a multiaddr (%v): write e.g. %s", s, err, dialExample)
	}
	if err := checkDialable(a); err != nil {
		return nil, fmt.Errorf("address %q %v", s, err)
	}
	return a, nil
}

// checkDialable returns why a can never be dialled, or nil.
func checkDialable(a ma.Multiaddr) error {
	comps := []ma.Component(a)
	if len(comps) == 0 {
		return fmt.Errorf("is empty: write e.g. %s", dialExample)
	}
	host := comps[0]
	switch host.Protocol().Code {
	case ma.P_IP4, ma.P_IP6:
		if ip := net.ParseIP(host.Value()); ip == nil || ip.IsUnspecified() {
			return fmt.Errorf("is the unspecified address %s, on which a server listens on every interface but which no one can dial: write the address the others reach this server at, e.g. %s (the server itself may still --listen on %s)", host.Value(), dialExample, a)
		}
	case ma.P_DNS, ma.P_DNS4, ma.P_DNS6:
	default:
		return fmt.Errorf("starts with /%s, not an IP address or DNS name: write e.g. %s", host.Protocol().Name, dialExample)
	}
	if len(comps) == 1 {
		return fmt.Errorf("has no port: write it with the TCP port the server listens on, e.g. %s/tcp/4001", a)
	}
	port := comps[1]
	switch {
	case port.Protocol().Code != ma.P_TCP:
		return fmt.Errorf("uses /%s, a transport this fedecdf does not have (it dials TCP only): write e.g. %s/tcp/4001", port.Protocol().Name, host.String())
	case port.Value() == "0":
		return fmt.Errorf("has TCP port 0, which a listener replaces by a random port no one knows: write the server's fixed port, e.g. %s/tcp/4001", host.String())
	case len(comps) > 2:
		return fmt.Errorf("goes on after the port (%s): write only %s (the server's identity is its peer_id)", ma.Multiaddr(comps[2:]).String(), ma.Multiaddr(comps[:2]).String())
	}
	return nil
}

// NewGrid returns the manifest's grid.
func (m *Manifest) NewGrid() (*ecdf.Grid, error) {
	scale, err := ecdf.ParseScale(m.Grid.Scale)
	if err != nil {
		return nil, err
	}
	if m.Grid.Bins > protocol.MaxPrefixes {
		return nil, fmt.Errorf("bins %d exceed the protocol's %d prefixes per query", m.Grid.Bins, protocol.MaxPrefixes)
	}
	return ecdf.NewGrid(scale, m.Grid.Min, m.Grid.Max, m.Grid.Bins)
}

// Policy returns the dataset's privacy policy, which both servers
// enforce.
func (m *Manifest) Policy() (server.Policy, error) {
	rel, err := mechanism.ParseRelation(m.Mechanism.Neighbours)
	if err != nil || rel.String() != m.Mechanism.Neighbours {
		return server.Policy{}, fmt.Errorf("neighbours %q: want replace or addremove", m.Mechanism.Neighbours)
	}
	if len(m.Mechanism.Allowed) == 0 {
		return server.Policy{}, fmt.Errorf("no allowed mechanisms: list those releases may use (%s)", strings.Join(mechanism.Names, ", "))
	}
	p := server.Policy{Relation: rel, Mechanisms: m.Mechanism.Allowed, MaxDelta: m.Mechanism.MaxDelta, MaxEpsilon: m.Mechanism.MaxEpsilon}
	return p, p.Validate()
}

// MechanismParams returns the mechanism of the analyst commands'
// releases, checked against the policy and by building it.
func (m *Manifest) MechanismParams() (mechanism.Params, error) {
	policy, err := m.Policy()
	if err != nil {
		return mechanism.Params{}, err
	}
	p := mechanism.Params{Name: m.Mechanism.Name, Bins: m.Grid.Bins, Epsilon: m.Mechanism.Epsilon, Delta: m.Mechanism.Delta, K: m.Mechanism.K, Relation: policy.Relation}
	if err := policy.Allow(p); err != nil {
		return p, fmt.Errorf("the analysts' release (name, epsilon, delta) does not fit the servers' policy: %w", err)
	}
	if _, err := payload.NewMechanism(p); err != nil {
		return p, err
	}
	return p, nil
}

// ServerDataset is the dataset both servers run.
func (m *Manifest) ServerDataset() (server.Dataset, error) {
	policy, err := m.Policy()
	if err != nil {
		return server.Dataset{}, fmt.Errorf("manifest: mechanism: %w", err)
	}
	return server.Dataset{
		Name: m.Dataset, Backend: server.Backend(m.Backend), Bins: m.Grid.Bins,
		// Both backends verify every report; a dcf deployment collects
		// the probability too (the payload layout), verified.
		Probability: m.Backend == string(server.DCF),
		Budget:      ledger.Budget{Epsilon: m.Budget.Epsilon, Delta: m.Budget.Delta},
		Policy:      policy,
		MinReports:  m.MinReports,
	}, nil
}

// analystName is the address-book name of the i-th analyst.
func analystName(i int) transport.PeerID { return transport.PeerID(fmt.Sprintf("analyst-%d", i+1)) }

// operatorName is the address-book name of the i-th operator.
func operatorName(i int) transport.PeerID { return transport.PeerID(fmt.Sprintf("operator-%d", i+1)) }

// Book returns the address book of a participant: both servers and,
// for a server, the analysts and operators (recognised, never dialled).
func (m *Manifest) Book(withAnalysts bool) (map[transport.PeerID]peer.AddrInfo, error) {
	b := make(map[transport.PeerID]peer.AddrInfo)
	for name, e := range map[transport.PeerID]Endpoint{LeaderName: m.Leader, HelperName: m.Helper} {
		info, err := e.addrInfo()
		if err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", name, err)
		}
		b[name] = info
	}
	if withAnalysts {
		for _, c := range []struct {
			what string
			ids  []string
			name func(int) transport.PeerID
		}{{"analyst", m.Analysts, analystName}, {"operator", m.Operators, operatorName}} {
			for i, a := range c.ids {
				id, err := peer.Decode(a)
				if err != nil {
					return nil, fmt.Errorf("manifest: %s %q: %w", c.what, a, err)
				}
				b[c.name(i)] = peer.AddrInfo{ID: id}
			}
		}
	}
	return b, nil
}

// AnalystNames returns the address-book names of all analysts.
func (m *Manifest) AnalystNames() []transport.PeerID {
	names := make([]transport.PeerID, len(m.Analysts))
	for i := range names {
		names[i] = analystName(i)
	}
	return names
}

// OperatorNames returns the address-book names of all operators.
func (m *Manifest) OperatorNames() []transport.PeerID {
	names := make([]transport.PeerID, len(m.Operators))
	for i := range names {
		names[i] = operatorName(i)
	}
	return names
}
