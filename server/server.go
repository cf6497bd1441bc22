package server

// Server: the configuration, the datasets a server opens (New) and the
// dispatch of each request by role (handle) to the files of its step.

import (
	"context"
	"fmt"
	"sync"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// Role is a server's place in the protocol.
type Role int

const (
	// Leader talks to analysts, drives the helper, and combines shares.
	Leader Role = iota
	// Helper answers only the leader.
	Helper
)

// String returns "leader" or "helper".
func (r Role) String() string {
	if r == Leader {
		return "leader"
	}
	return "helper"
}

// Backend is how parties report: "additive" (one verified Prio3
// histogram per party, internal/verify) or "dcf" (dp-ecdf §4.2: a pair
// of DCF keys per party, verified as internal/vdcf unless the dataset is
// Unverified).
type Backend string

// The secure-sum backends a server runs.
const (
	Additive Backend = "additive"
	DCF      Backend = "dcf"
)

// Dataset configures one dataset a server aggregates.
type Dataset struct {
	Name    string
	Backend Backend
	Bins    int              // N, the grid size every release and query uses
	Budget  mechanism.Budget // total privacy budget of all its releases
	// Policy is the privacy contract of every release of the dataset:
	// its neighbouring relation and the mechanisms, δ and ε a release
	// may ask for; both servers refuse any other release before anything
	// is charged (ErrPolicy).
	Policy Policy
	// MinReports is the least number of agreed reports a release needs
	// before any answer is given.
	MinReports int
	// MaxReports is the most reports the dataset accepts (0: the
	// protocol.MaxReports a release record holds, also the most it may
	// be): an upload beyond it is refused (ErrTooManyReports), so that
	// every release over the reports can be recorded.
	MaxReports int
	// Unverified, for the dcf backend only, folds each party's Z_2^64 DCF
	// keys unchecked (fss), as before verification existed: one party can
	// then move any statistic arbitrarily. It is for deployments whose
	// servers do not share a verification key yet, and for measuring the
	// cost of verification. A verified dcf dataset (the default) takes
	// verified DCF reports (internal/vdcf) and needs Config.VerifyKey.
	Unverified bool
	// Probability is set when the dataset collects the probability
	// component. A verified dcf dataset's reports then carry it
	// (vdcf.NewWithProbability: verified in [0, 2^32] at the record's
	// bin), and its releases may ask for it; without it they may not.
	// The additive backend cannot carry it (its reports are Prio3
	// histograms over class × bin), and an unverified dcf dataset's keys
	// always carry it, checked by no one.
	Probability bool
}

// Config configures a server.
type Config struct {
	Role Role
	// Peer is the other server: the helper for the leader (which Conn
	// reaches), the leader for the helper (the only peer it answers
	// release and query requests from).
	Peer   core.PeerID
	Conn   core.Conn
	Ledger core.Ledger
	// Releases keeps each release's seed and report set, saved before the
	// release is acknowledged and loaded by New (a memoryReleases if nil).
	Releases ReleaseStore
	// Reports gives back the DCF reports the server accepted, to fold
	// their keys again (nil: the server keeps the uploads in memory;
	// NoReports: it keeps none).
	Reports  ReportStore
	Datasets []Dataset
	// Manifest is this server's digest of each part of its deployment
	// manifest, by the part's name (nil: no check). The leader
	// sends them to the helper at first contact (CheckPeer) and before
	// every release, the helper answers with its own, and each server
	// refuses to serve while they differ (ErrManifestMismatch); the
	// helper creates no release before the leader has shown matching
	// digests.
	Manifest map[string][32]byte
	// VerifyKey is the verification key the two servers share for their
	// verified datasets — Prio3's for the additive backend, the verified
	// DCF's (internal/vdcf) for the dcf backend — secret from parties
	// (required, not all zero, when a dataset is verified).
	VerifyKey [verify.KeySize]byte
	// Verdicts keeps the verification verdicts of the verified datasets,
	// loaded by New (none kept if nil: the server cannot restart its
	// verification). With one, a verified upload is
	// verified only once the caller has made it durable and says so
	// (Stored), and a restarted server counts a report accepted before
	// when its upload is handed to it again (package deploy replays its
	// store).
	Verdicts VerdictStore
	// Preparations, if not nil, holds what the role's processes prepared
	// of the verified DCF datasets' reports (Preparer): the Server
	// verifies a report only once it is prepared, from its sketch, and
	// sums releases from the folds (package deploy sets it for a role
	// of several processes on PostgreSQL).
	Preparations PreparationStore
}

// NewMemoryLedger returns a Ledger that keeps the spending in memory
// only, applying the budget rule every ledger applies: for a test, or a
// program whose releases need not outlive it (a restarted server with
// it forgets what it spent).
func NewMemoryLedger() core.Ledger { return ledger.NewMemory() }

// Server is a leader or helper of the two-server secure sum. Its Handle
// method answers protocol messages; it is safe for concurrent use.
type Server struct {
	cfg      Config
	mu       sync.Mutex
	datasets map[string]*dataset
	// releasing is held shared by every release being created and
	// exclusively by DropReports, so that no report is dropped from
	// under a release agreeing on it.
	releasing sync.RWMutex
	// mismatch is the difference of the two servers' manifests found by
	// the last exchange of digests (nil: none found); shown reports that
	// the last exchange found none.
	mismatch error
	shown    bool
	// verifying is held by the leader while it verifies verified reports
	// with the helper or agrees with it on a release's report set, so that
	// no report is decided between the two.
	verifying sync.Mutex
}

type dataset struct {
	Dataset
	reports heldReports // accepted: folded (unverified dcf) or verified
	// fold is the aggregate of the unverified DCF reports (nil otherwise).
	fold *folded
	// verified is the verification state and aggregate of the verified
	// reports, additive or dcf (nil for unverified dcf).
	verified *verified
	releases map[payload.ReleaseID]*release
	// pending holds the leader's releases recorded as pending: asked of
	// the helper, neither confirmed nor refused by it yet (leader only).
	pending map[payload.ReleaseID]*intent
	// creating marks the releases a request is creating right now; a
	// second request for one of them is refused (ErrReleaseBusy).
	creating map[payload.ReleaseID]bool
	// rewound is the difference the last ledger check found between the
	// two servers' ledgers (ErrLedgerRewound), nil if none: while set,
	// no release of the dataset is created or answered. ledgerChecked
	// records, at the leader, that a check found them equal.
	rewound       error
	ledgerChecked bool
}

// intent is a release the leader recorded as pending: its spec
// (releaseSpec) and what it costs, which the leader holds from its
// budget until the release completes or aborts.
type intent struct {
	spec *protocol.CreateRelease
	cost ledger.Budget
}

// release is the state a server keeps for the life of a release: the
// agreed report set and its own secret noise, drawn from a seed of its
// own (crypto/rand) at full scale for every component.
type release struct {
	id      payload.ReleaseID
	reports []payload.ReportID // sorted
	// digest is the recorded digest of reports (payload.Digest), checked
	// at every read against the reports held (checkBound).
	digest     [32]byte
	mechanism  mechanism.Params
	components []payload.Component
	noise      map[payload.Component]mechanism.Release
	// created is when this server created the release (Unix seconds; 0:
	// unknown, a record older than the time).
	created int64
	// field holds, for the additive backend, this server's shares in the
	// field of Prio3 of the prefix sums of each component over the
	// release's reports; nil until computed.
	field map[payload.Component]fp128.Vec
	// sums holds, for the DCF backend, this server's share of the
	// prefix sums of each component over the release's reports, from
	// the aggregate: mod 2^64 (folded.over), or for a verified dataset
	// elements of F_p (verifiedDCF.sums); nil until computed, after a
	// restart until the first query.
	sums map[payload.Component][]uint64
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Role != Leader && cfg.Role != Helper {
		return nil, fmt.Errorf("server: unknown role %d", cfg.Role)
	}
	if cfg.Ledger == nil {
		return nil, fmt.Errorf("server: no budget ledger")
	}
	if cfg.Role == Leader && cfg.Conn == nil {
		return nil, fmt.Errorf("server: the leader needs a connection to the helper")
	}
	if cfg.Releases == nil {
		cfg.Releases = newMemoryReleases()
	}
	if cfg.Reports == nil {
		cfg.Reports = memoryReports{}
	}
	s := &Server{cfg: cfg, datasets: make(map[string]*dataset)}
	for _, d := range cfg.Datasets {
		if err := checkDataset(d); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if d.MaxReports == 0 {
			d.MaxReports = protocol.MaxReports
		}
		if _, dup := s.datasets[d.Name]; dup {
			return nil, fmt.Errorf("server: dataset %q configured twice", d.Name)
		}
		ds := &dataset{
			Dataset:  d,
			reports:  make(heldReports),
			releases: make(map[payload.ReleaseID]*release),
			pending:  make(map[payload.ReleaseID]*intent),
			creating: make(map[payload.ReleaseID]bool),
		}
		if err := s.aggregate(ds); err != nil {
			return nil, fmt.Errorf("server: dataset %q: %w", d.Name, err)
		}
		s.datasets[d.Name] = ds
		if err := s.loadReleases(ds); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// aggregate sets up the aggregate of d: the unverified DCF fold, or the
// verification state of a verified dataset.
func (s *Server) aggregate(d *dataset) error {
	var err error
	if d.Backend == DCF && d.Unverified {
		d.fold, err = newFolded(d.Bins)
		return err
	}
	if s.cfg.VerifyKey == ([verify.KeySize]byte{}) {
		return fmt.Errorf("the verified %s backend needs the servers' shared verification key (Config.VerifyKey), secret from parties", d.Backend)
	}
	store, gate := s.cfg.Verdicts, true
	if store == nil {
		store, gate = noVerdicts{}, false
	}
	if d.verified, err = newVerified(d.Dataset, s.cfg.Role, s.cfg.VerifyKey, store, gate, d.reports); err != nil {
		return err
	}
	if dcf, ok := d.verified.scheme.(*verifiedDCF); ok && s.cfg.Preparations != nil {
		d.verified.prep = &prepared{store: s.cfg.Preparations, dataset: d.Name, dcf: dcf}
	}
	if err := d.verified.load(s.cfg.Role); err != nil {
		return fmt.Errorf("loading the verdicts: %w", err)
	}
	return nil
}

func checkDataset(d Dataset) error {
	switch {
	case d.Name == "" || len(d.Name) > protocol.MaxNameLen:
		return fmt.Errorf("dataset name %q is empty or longer than %d bytes", d.Name, protocol.MaxNameLen)
	case d.Backend != Additive && d.Backend != DCF:
		return fmt.Errorf("dataset %q: unknown backend %q (want additive or dcf)", d.Name, d.Backend)
	case d.Unverified && d.Backend != DCF:
		return fmt.Errorf("dataset %q: only the dcf backend can be unverified", d.Name)
	case d.Probability && d.Backend == Additive:
		return fmt.Errorf("dataset %q: the additive backend's reports (Prio3 histograms over class × bin) cannot carry the probability component: collect it with the dcf backend", d.Name)
	case d.Bins < 1 || d.Bins > protocol.MaxPrefixes:
		return fmt.Errorf("dataset %q: bins %d not in [1, %d]", d.Name, d.Bins, protocol.MaxPrefixes)
	case d.MinReports < 1:
		return fmt.Errorf("dataset %q: minimum number of reports %d is not positive", d.Name, d.MinReports)
	case d.MaxReports < 0 || d.MaxReports > protocol.MaxReports:
		return fmt.Errorf("dataset %q: maximum number of reports %d not in [0, %d] (0: %d)", d.Name, d.MaxReports, protocol.MaxReports, protocol.MaxReports)
	}
	if err := d.Budget.Valid(); err != nil {
		return fmt.Errorf("dataset %q: total budget: %w", d.Name, err)
	}
	if err := d.Policy.Validate(); err != nil {
		return fmt.Errorf("dataset %q: %w", d.Name, err)
	}
	return nil
}

// Handle answers one encoded request from peer from: a program that
// embeds the server serves its transport's requests with it.
func (s *Server) Handle(ctx context.Context, from core.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return protocol.Encode(protocol.Refusalf("%s: malformed request: %w", s.cfg.Role, err))
	}
	return protocol.Encode(s.handleMessage(ctx, from, msg))
}

// handleMessage answers one decoded request as Handle answers an encoded
// one; a refusal is a *protocol.Error.
func (s *Server) handleMessage(ctx context.Context, from core.PeerID, msg protocol.Message) protocol.Message {
	resp, err := s.handle(ctx, from, msg)
	if err != nil {
		return protocol.Refusal(err)
	}
	return resp
}

func (s *Server) handle(ctx context.Context, from transport.PeerID, msg protocol.Message) (protocol.Message, error) {
	if err := s.manifestAgreed(msg); err != nil {
		return nil, err
	}
	switch m := msg.(type) {
	case *protocol.ManifestDigest:
		return s.manifestDigest(from, m)
	case *protocol.Upload:
		return s.upload(from, m)
	case *protocol.Prepare:
		if err := s.fromLeaderToHelper(from, "verification"); err != nil {
			return nil, err
		}
		return s.prepared(m)
	case *protocol.Decide:
		if err := s.fromLeaderToHelper(from, "verification"); err != nil {
			return nil, err
		}
		return s.decided(m)
	case *protocol.CreateRelease:
		return s.createRelease(ctx, from, m)
	case *protocol.Query:
		return s.query(ctx, from, m)
	case *protocol.LedgerCheck:
		return s.ledgerCheck(from, m)
	}
	return nil, fmt.Errorf("%s: unexpected %T request", s.cfg.Role, msg)
}

// dataset returns the named dataset; the caller holds s.mu.
func (s *Server) dataset(name string) (*dataset, error) {
	d, ok := s.datasets[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", s.cfg.Role, ErrUnknownDataset, name)
	}
	return d, nil
}

// fromLeader checks that a helper-only request comes from the leader.
func (s *Server) fromLeader(from transport.PeerID, what string) error {
	if s.cfg.Role == Helper && from != s.cfg.Peer {
		return fmt.Errorf("helper: %s from %q refused: %w (%q)", what, from, ErrNotLeader, s.cfg.Peer)
	}
	return nil
}

// fromLeaderToHelper checks that a request only the leader sends the
// helper comes from the leader to the helper: the leader refuses it from
// anyone, since nobody else drives it.
func (s *Server) fromLeaderToHelper(from transport.PeerID, what string) error {
	if s.cfg.Role == Leader {
		return fmt.Errorf("leader: %s from %q refused: %w, to the helper", what, from, ErrNotLeader)
	}
	return s.fromLeader(from, what)
}
