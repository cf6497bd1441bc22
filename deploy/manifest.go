package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// ManifestVersion is the version of the manifest format.
const ManifestVersion = 1

// UploadDirect is the upload mode in which a party sends each server its
// own DCF key directly, over a Noise channel to that server.
const UploadDirect = "direct"

// The names of the two servers in the protocol and the address book.
const (
	LeaderName transport.PeerID = "leader"
	HelperName transport.PeerID = "helper"
)

// Manifest is the public description of one deployment that every
// participant holds: who the servers and analysts are (pinned by peer
// ID), where the servers listen, and the dataset's grid, payload,
// mechanism and budget.
type Manifest struct {
	Version    int      `json:"version"`
	Protocol   int      `json:"protocol"` // protocol.Version
	Dataset    string   `json:"dataset"`
	Backend    string   `json:"backend"` // "dcf": parties upload once and go offline
	Upload     string   `json:"upload"`  // UploadDirect or UploadRelay
	Leader     Endpoint `json:"leader"`
	Helper     Endpoint `json:"helper"`
	Analysts   []string `json:"analysts"` // peer IDs allowed to create releases and query
	Grid       Grid     `json:"grid"`
	Payload    []string `json:"payload"` // component names, in protocol order
	Mechanism  Mech     `json:"mechanism"`
	Budget     Budget   `json:"budget"`
	MinReports int      `json:"min_reports"`
}

// Endpoint is one server: its pinned identity and listen addresses.
type Endpoint struct {
	Public
	Addrs []string `json:"addrs"`
}

// Grid is the public grid τ_1 < … < τ_N (ecdf.NewGrid).
type Grid struct {
	Scale string  `json:"scale"` // linear or log
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Bins  int     `json:"bins"`
}

// Mech is the noise mechanism of every release: ε and δ per payload
// component released, under the neighbouring relation.
type Mech struct {
	Name     string  `json:"name"`
	Epsilon  float64 `json:"epsilon"`
	Delta    float64 `json:"delta"`
	K        int     `json:"k,omitempty"`
	Relation string  `json:"relation"`
}

// Budget is the total (ε, δ) of all releases of the dataset, enforced by
// each server's ledger.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// PayloadLayout returns the protocol's payload component names in order.
func PayloadLayout() []string {
	names := make([]string, protocol.NumComponents)
	for c := range protocol.Component(protocol.NumComponents) {
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

// Check validates every field.
func (m *Manifest) Check() error {
	switch {
	case m.Version != ManifestVersion:
		return fmt.Errorf("version %d is not supported (want %d)", m.Version, ManifestVersion)
	case m.Protocol != protocol.Version:
		return fmt.Errorf("protocol %d is not supported (want %d)", m.Protocol, protocol.Version)
	case m.Backend != string(server.DCF):
		return fmt.Errorf("backend %q: deployments run the dcf backend", m.Backend)
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
	for _, a := range m.Analysts {
		if _, err := peer.Decode(a); err != nil {
			return fmt.Errorf("analyst %q: %w", a, err)
		}
	}
	if _, err := m.NewGrid(); err != nil {
		return fmt.Errorf("grid: %w", err)
	}
	if _, err := m.MechanismParams(); err != nil {
		return fmt.Errorf("mechanism: %w", err)
	}
	if m.Dataset == "" || len(m.Dataset) > protocol.MaxNameLen {
		return fmt.Errorf("dataset name %q is empty or longer than %d bytes", m.Dataset, protocol.MaxNameLen)
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
	_, err := e.addrInfo()
	return err
}

func (e Endpoint) addrInfo() (peer.AddrInfo, error) {
	id, err := peer.Decode(e.PeerID)
	if err != nil {
		return peer.AddrInfo{}, fmt.Errorf("peer_id %q: %w", e.PeerID, err)
	}
	info := peer.AddrInfo{ID: id}
	for _, s := range e.Addrs {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return info, fmt.Errorf("address %q: %w", s, err)
		}
		info.Addrs = append(info.Addrs, a)
	}
	return info, nil
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

// MechanismParams returns the mechanism of every release, checked by
// building it.
func (m *Manifest) MechanismParams() (mechanism.Params, error) {
	rel, err := mechanism.ParseRelation(m.Mechanism.Relation)
	if err != nil {
		return mechanism.Params{}, err
	}
	p := mechanism.Params{Name: m.Mechanism.Name, Bins: m.Grid.Bins, Epsilon: m.Mechanism.Epsilon, Delta: m.Mechanism.Delta, K: m.Mechanism.K, Relation: rel}
	if _, err := protocol.NewMechanism(p); err != nil {
		return p, err
	}
	return p, nil
}

// serverDataset is the dataset both servers run.
func (m *Manifest) serverDataset() server.Dataset {
	return server.Dataset{
		Name: m.Dataset, Backend: server.DCF, Bins: m.Grid.Bins,
		Budget:     server.Budget{Epsilon: m.Budget.Epsilon, Delta: m.Budget.Delta},
		MinReports: m.MinReports,
	}
}

// analystName is the address-book name of the i-th analyst.
func analystName(i int) transport.PeerID { return transport.PeerID(fmt.Sprintf("analyst-%d", i+1)) }

// book returns the address book of a participant: both servers and,
// for a server, the analysts (recognised, never dialled).
func (m *Manifest) book(withAnalysts bool) (map[transport.PeerID]peer.AddrInfo, error) {
	b := make(map[transport.PeerID]peer.AddrInfo)
	for name, e := range map[transport.PeerID]Endpoint{LeaderName: m.Leader, HelperName: m.Helper} {
		info, err := e.addrInfo()
		if err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", name, err)
		}
		b[name] = info
	}
	if withAnalysts {
		for i, a := range m.Analysts {
			id, err := peer.Decode(a)
			if err != nil {
				return nil, fmt.Errorf("manifest: analyst %q: %w", a, err)
			}
			b[analystName(i)] = peer.AddrInfo{ID: id}
		}
	}
	return b, nil
}

// analystNames returns the address-book names of all analysts.
func (m *Manifest) analystNames() []transport.PeerID {
	names := make([]transport.PeerID, len(m.Analysts))
	for i := range names {
		names[i] = analystName(i)
	}
	return names
}
