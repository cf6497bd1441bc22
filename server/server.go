package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/vdcf"
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

// ErrTooManyReports is wrapped by the refusal of an upload to a dataset
// that holds its Dataset.MaxReports reports.
var ErrTooManyReports = errcode.New(errcode.TooManyReports, "too many reports")

// Config configures a server.
type Config struct {
	Role Role
	// Peer is the other server: the helper for the leader (which Conn
	// reaches), the leader for the helper (the only peer it answers
	// release and query requests from).
	Peer   transport.PeerID
	Conn   transport.Conn
	Ledger ledger.Ledger
	// Releases keeps each release's seed and report set, saved before the
	// release is acknowledged and loaded by New (a memoryReleases if nil).
	Releases ReleaseStore
	// Reports gives back the DCF reports the server accepted, to fold
	// their keys again (nil: the server keeps the uploads in memory;
	// NoReports: it keeps none).
	Reports  ReportStore
	Datasets []Dataset
	// Manifest is this server's digest of each part of its deployment
	// manifest (package deploy computes them; nil: no check). The leader
	// sends them to the helper at first contact (CheckPeer) and before
	// every release, the helper answers with its own, and each server
	// refuses to serve while they differ (ErrManifestMismatch); the
	// helper creates no release before the leader has shown matching
	// digests.
	Manifest []protocol.ManifestField
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
}

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
	reports map[payload.ReportID]struct{} // accepted: folded (unverified dcf) or verified
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
			reports:  make(map[payload.ReportID]struct{}),
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
	if err := d.verified.load(s.cfg.Role); err != nil {
		return fmt.Errorf("loading the verdicts: %w", err)
	}
	return nil
}

// loadReleases restores the recorded releases of d with their noise,
// and the leader's pending releases.
func (s *Server) loadReleases(d *dataset) error {
	err := s.cfg.Releases.LoadReleases(d.Name, func(id payload.ReleaseID, b []byte) error {
		if isPending(b) {
			return s.loadPending(d, id, b)
		}
		r, err := loadRecord(d.Name, id, b)
		if err != nil {
			return err
		}
		if r.Mechanism.Bins != d.Bins {
			return fmt.Errorf("release %v is of dataset %q over %d bins, want %q over %d", r.Release, r.Dataset, r.Mechanism.Bins, d.Name, d.Bins)
		}
		// The helper records a release before charging it (commit): a
		// record whose charge a crash prevented was never acknowledged,
		// and its noise never used.
		if charged, err := s.cfg.Ledger.Charged(d.Name, r.Release); err != nil || !charged {
			return err
		}
		componentNoise, err := r.noise()
		if err != nil {
			return fmt.Errorf("release %v: %w", r.Release, err)
		}
		d.releases[r.Release] = &release{id: r.Release, reports: r.Reports, digest: payload.Digest(r.Reports), mechanism: r.Mechanism, components: r.Components, noise: componentNoise}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: loading the releases of dataset %q: %w", d.Name, err)
	}
	return nil
}

// loadPending restores a pending release of d at the leader, to be
// completed or aborted by a retry (ResolvePending).
func (s *Server) loadPending(d *dataset, id payload.ReleaseID, b []byte) error {
	m, err := parsePending(b)
	switch {
	case err != nil:
		return fmt.Errorf("release %v: %w", id, err)
	case m.Release != id || m.Dataset != d.Name:
		return fmt.Errorf("the pending record saved as release %v of dataset %q is release %v of dataset %q", id, d.Name, m.Release, m.Dataset)
	case s.cfg.Role != Leader:
		return fmt.Errorf("release %v: the helper holds a leader's pending record: is this the leader's store?", id)
	}
	cost, err := specCost(m)
	if err != nil {
		return fmt.Errorf("pending release %v: %w", id, err)
	}
	d.pending[id] = &intent{spec: m, cost: cost}
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

// Handle answers one encoded request; it is the server's transport.Handler.
func (s *Server) Handle(ctx context.Context, from transport.PeerID, req []byte) []byte {
	msg, err := protocol.Decode(req)
	if err != nil {
		return protocol.Encode(protocol.Refusalf("%s: malformed request: %w", s.cfg.Role, err))
	}
	return protocol.Encode(s.HandleMessage(ctx, from, msg))
}

// HandleMessage answers one decoded request as Handle answers an encoded
// one, for a caller that has decoded it already; a refusal is a
// *protocol.Error.
func (s *Server) HandleMessage(ctx context.Context, from transport.PeerID, msg protocol.Message) protocol.Message {
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

// upload accepts a report; a duplicate report ID is dropped. A DCF
// report is folded; an additive one is held for verification (Verify),
// or rejected at once as malformed if its shares do not decode.
func (s *Server) upload(from transport.PeerID, m *protocol.Upload) (protocol.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, err
	}
	key, err := s.parseReport(d, m)
	if err != nil {
		return nil, fmt.Errorf("%s: report %v rejected: %w", s.cfg.Role, m.Report, err)
	}
	if _, dup := d.reports[m.Report]; dup {
		return &protocol.Ack{Duplicate: true}, nil
	}
	if held := len(d.reports) + d.undecided(); held >= d.MaxReports {
		return nil, fmt.Errorf("%s: report %v refused: %w: dataset %q holds its maximum of %d reports; configure another dataset for more", s.cfg.Role, m.Report, ErrTooManyReports, d.Name, d.MaxReports)
	}
	if d.verified != nil {
		dup, accepted, err := d.verified.hold(s.cfg.Role, m)
		if err != nil {
			return nil, fmt.Errorf("%s: report %v rejected: %w", s.cfg.Role, m.Report, err)
		}
		if accepted {
			d.reports[m.Report] = struct{}{}
		}
		return &protocol.Ack{Duplicate: dup}, nil
	}
	if err := d.fold.add(key); err != nil {
		return nil, fmt.Errorf("%s: report %v not folded: %w", s.cfg.Role, m.Report, err)
	}
	if k, ok := s.cfg.Reports.(keeper); ok {
		k.keep(m)
	}
	d.reports[m.Report] = struct{}{}
	return &protocol.Ack{}, nil
}

// undecided is the number of verified reports held for verification
// (the helper's tentative reports are among its held uploads).
func (d *dataset) undecided() int {
	if d.verified == nil {
		return 0
	}
	return len(d.verified.uploads)
}

// parseReport checks the body of an upload against the dataset.
func (s *Server) parseReport(d *dataset, m *protocol.Upload) (*fss.Key, error) {
	switch {
	case d.Backend == Additive && (len(m.Key) != 0 || len(m.Share) == 0):
		return nil, fmt.Errorf("dataset %q uses the additive backend: the upload must carry a verified report (public and input share, party.UploadVerified), not a DCF key", d.Name)
	case d.verified != nil && d.Backend == DCF && (len(m.Key)+len(m.Public) != 0 || len(m.Share) == 0):
		return nil, fmt.Errorf("dataset %q uses the verified dcf backend: the upload must carry a verified DCF share (party.UploadVerifiedKeys), not a bare DCF key", d.Name)
	case d.verified != nil:
		return nil, nil
	case len(m.Key) == 0:
		return nil, fmt.Errorf("missing DCF key (dataset %q uses the unverified dcf backend: party.UploadKeys)", d.Name)
	}
	key, err := fss.Decode(m.Key)
	if err != nil {
		return nil, fmt.Errorf("malformed DCF key: %w", err)
	}
	wantParty := int(s.cfg.Role)
	switch {
	case key.Bits() != dcfBits(d.Bins):
		return nil, fmt.Errorf("malformed DCF key: %d input bits, want %d for %d bins", key.Bits(), dcfBits(d.Bins), d.Bins)
	case key.Components() != payload.NumComponents:
		return nil, fmt.Errorf("malformed DCF key: %d payload components, want %d", key.Components(), payload.NumComponents)
	case key.Party() != wantParty:
		return nil, fmt.Errorf("DCF key is party %d's, but the %s holds party %d's", key.Party(), s.cfg.Role, wantParty)
	}
	return key, nil
}

func checkPrefixes(prefixes []int, bins int) error {
	if len(prefixes) == 0 {
		return fmt.Errorf("no prefixes")
	}
	if last := prefixes[len(prefixes)-1]; last > bins {
		return fmt.Errorf("prefix %d is beyond the %d bins", last, bins)
	}
	return nil
}

// releaseCost is what a release of dataset d charges: its spec (ε, δ)
// once per privacy unit of its components (payload.PrivacyUnits: Count,
// the {Label, NotLabel} pair and Probability are one unit each). The
// ledger accounts in d's neighbouring relation, and the spec is a
// release's privacy loss only under the relation it is calibrated for:
// a release outside d's policy (Policy.Allow), another relation among
// others, has no cost here and is refused, wrapping ErrPolicy.
func releaseCost(d *dataset, m *protocol.CreateRelease) (ledger.Budget, error) {
	if err := d.Policy.Allow(m.Mechanism); err != nil {
		return ledger.Budget{}, fmt.Errorf("dataset %q: %w", d.Name, err)
	}
	if d.verified != nil && !d.Probability && slices.Contains(m.Components, payload.Probability) {
		return ledger.Budget{}, fmt.Errorf("dataset %q: %w: its verified reports carry no probability component (release count, label and not-label, or collect probabilities with a dcf dataset that sets Probability)", d.Name, ErrPolicy)
	}
	return specCost(m)
}

// specCost is the spec (ε, δ) of release m once per privacy unit of its
// components, whatever the policy.
func specCost(m *protocol.CreateRelease) (ledger.Budget, error) {
	units, err := payload.PrivacyUnits(m.Components)
	if err != nil {
		return ledger.Budget{}, err
	}
	k := float64(units)
	return ledger.Budget{Epsilon: k * m.Mechanism.Epsilon, Delta: k * m.Mechanism.Delta}, nil
}

// draft is a release request that passed this server's checks, with its
// seed drawn and its noise built: what remains is to agree on the report
// set, charge and record it.
type draft struct {
	d     *dataset
	ids   []payload.ReportID // the reports this server holds, sorted
	cost  ledger.Budget
	rec   *releaseRecord // Reports set once agreed
	noise map[payload.Component]mechanism.Release
}

// createRelease fixes a release over the report set both servers hold:
// at the leader, leaderRelease; at the helper, helperRelease.
func (s *Server) createRelease(ctx context.Context, from transport.PeerID, m *protocol.CreateRelease) (protocol.Message, error) {
	if err := s.fromLeader(from, "release"); err != nil {
		return nil, err
	}
	s.releasing.RLock()
	defer s.releasing.RUnlock()
	if s.cfg.Role == Leader {
		return s.leaderRelease(ctx, m)
	}
	if err := s.leaderShown(m); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var rewound error
	if d := s.datasets[m.Dataset]; d != nil {
		rewound = d.ledgerAgreed()
	}
	s.mu.Unlock()
	if rewound != nil {
		return nil, fmt.Errorf("helper: release %v refused: %w", m.Release, rewound)
	}
	return s.helperRelease(m)
}

// helperRelease creates a release the leader asks for. The helper checks
// the request against the dataset's policy, its budget and bins, and
// builds the release's noise (prepareRelease); the leader sends the size
// and digest of its set, and the full list if they differ; the helper
// keeps the intersection and returns the leader's IDs it lacks, so both
// use the same set. It checks the agreed set (its minimum size, what a
// record holds), then records the release and charges its ledger
// (commit) before acknowledging it. A retry of a release it has recorded
// is answered from the record (retriedRelease), at no further cost.
func (s *Server) helperRelease(m *protocol.CreateRelease) (protocol.Message, error) {
	p, answer, err := s.prepareRelease(m)
	switch {
	case err != nil:
		return nil, err
	case answer != nil:
		return answer, nil
	}
	defer s.doneCreating(p.d, m.Release)
	agreed, resp := s.agree(m, p.ids)
	if resp.NeedIDs {
		return resp, nil
	}
	if err := s.checkAgreed(p, m, agreed); err != nil {
		return nil, nothingCharged(err)
	}
	created, err := s.commit(p, m, resp)
	if err != nil && !errors.Is(err, ErrReleaseExists) {
		err = nothingCharged(err) // the record, or the charge, failed
	}
	return created, err
}

// checkAgreed checks the agreed report set of a release: at least the
// dataset's minimum, at most what a record holds.
func (s *Server) checkAgreed(p *draft, m *protocol.CreateRelease, agreed []payload.ReportID) error {
	p.rec.Reports = agreed
	if len(agreed) < p.d.MinReports {
		return fmt.Errorf("%s: dataset %q: %s held by both servers, %w %d", s.cfg.Role, p.d.Name, reportsHeld(m.Mechanism, len(agreed)), ErrTooFewReports, p.d.MinReports)
	}
	if err := p.rec.checkSize(); err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Role, err)
	}
	return nil
}

// leaderRelease creates a release an analyst asks for, as the states and
// transitions of server/doc.go ("Release creation") say: a new request
// that passes the leader's checks is recorded as pending (beginRelease)
// before the helper hears of it; completeRelease then asks the helper
// and, on its acknowledgement, charges and records the release, or on
// its refusal aborts it. A retry of a pending release, with exactly its
// spec, runs completeRelease again; a retry of a created one is answered
// from its record.
func (s *Server) leaderRelease(ctx context.Context, m *protocol.CreateRelease) (protocol.Message, error) {
	if err := s.checkPeer(ctx); err != nil {
		return nil, s.notAsked(m, err)
	}
	s.mu.Lock()
	d := s.datasets[m.Dataset]
	s.mu.Unlock()
	if d != nil {
		if err := s.checkLedger(ctx, d); err != nil {
			return nil, s.notAsked(m, err)
		}
	}
	in, answer, err := s.beginRelease(m)
	if in == nil {
		if answer == nil {
			return nil, err
		}
		return answer, err
	}
	defer s.doneCreating(d, m.Release)
	return s.completeRelease(ctx, d, in)
}

// beginRelease checks a release request at the leader and returns the
// pending release to complete, marked as being created: a pending one
// whose spec the request repeats exactly, or a new one, which must pass
// the dataset's bins, policy and budget — net of the costs the pending
// releases hold — and is recorded as pending. A retry of a created
// release is answered from its record instead (answer).
func (s *Server) beginRelease(m *protocol.CreateRelease) (*intent, *protocol.ReleaseCreated, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: release %v refused", err, m.Release)
	}
	if m.Mechanism.Bins != d.Bins {
		return nil, nil, fmt.Errorf("leader: release %v: mechanism over %d bins, but dataset %q has %d", m.Release, m.Mechanism.Bins, d.Name, d.Bins)
	}
	if rel, recorded := d.releases[m.Release]; recorded {
		answer, err := s.retriedRelease(rel, m)
		return nil, answer, err
	}
	if d.creating[m.Release] {
		return nil, nil, fmt.Errorf("leader: release %v %w by another request: retry it in a moment", m.Release, ErrReleaseBusy)
	}
	in := d.pending[m.Release]
	if in != nil && !sameSpec(in.spec, m) {
		return nil, nil, fmt.Errorf("leader: release %v is pending with another mechanism or components, and %w: retry it with its spec (%s ε=%g δ=%g, components %v), or ask for a new release ID", m.Release, ErrReleaseExists, in.spec.Mechanism.Name, in.spec.Mechanism.Epsilon, in.spec.Mechanism.Delta, in.spec.Components)
	}
	if in == nil {
		if in, err = s.newIntent(d, m); err != nil {
			return nil, nil, err
		}
	}
	d.creating[m.Release] = true
	return in, nil, nil
}

// newIntent admits a new release m of d against the dataset's policy and
// budget, the costs of pending releases held, and records it as pending
// (durably, before the helper hears of it); the caller holds s.mu.
func (s *Server) newIntent(d *dataset, m *protocol.CreateRelease) (*intent, error) {
	cost, err := releaseCost(d, m)
	if err != nil {
		return nil, fmt.Errorf("leader: release %v refused: %w", m.Release, err)
	}
	if err := s.notCharged(d, m.Release); err != nil {
		return nil, err
	}
	spent, err := s.cfg.Ledger.Spent(d.Name)
	if err != nil {
		return nil, err
	}
	held, err := s.held(d)
	if err != nil {
		return nil, err
	}
	if err := ledger.Admit(false, spent.Add(held), cost, d.Budget); err != nil {
		if held != (ledger.Budget{}) {
			err = fmt.Errorf("%w (the spent budget includes ε=%g, δ=%g held by %d pending releases until a retry of each completes or aborts it)", err, held.Epsilon, held.Delta, len(d.pending))
		}
		return nil, fmt.Errorf("leader: release %v refused: dataset %q: %w", m.Release, d.Name, err)
	}
	if err := s.cfg.Releases.SaveRelease(d.Name, m.Release, marshalPending(m)); err != nil {
		return nil, fmt.Errorf("leader: release %v refused, nothing charged: its pending record could not be saved: %w", m.Release, err)
	}
	in := &intent{spec: releaseSpec(m), cost: cost}
	d.pending[m.Release] = in
	return in, nil
}

// notCharged refuses a release on the ledger that this server holds
// neither a record nor a pending record of (a lost store): its cost is
// unknown, so a retry cannot be admitted at no further cost.
func (s *Server) notCharged(d *dataset, id payload.ReleaseID) error {
	charged, err := s.cfg.Ledger.Charged(d.Name, id)
	if err != nil {
		return err
	}
	if charged {
		return fmt.Errorf("%s: release %v %w on the ledger of dataset %q without a record of it (a lost or foreign release store): ask for a new release ID", s.cfg.Role, id, ErrReleaseExists, d.Name)
	}
	return nil
}

// held is what the leader's pending releases of d not yet on its ledger
// hold of the budget; the caller holds s.mu.
func (s *Server) held(d *dataset) (ledger.Budget, error) {
	var held ledger.Budget
	for id, in := range d.pending {
		charged, err := s.cfg.Ledger.Charged(d.Name, id)
		if err != nil {
			return held, err
		}
		if !charged {
			held = held.Add(in.cost)
		}
	}
	return held, nil
}

// sameSpec reports whether the request m repeats the spec of a release.
func sameSpec(spec, m *protocol.CreateRelease) bool {
	return m.Mechanism == spec.Mechanism && slices.Equal(m.Components, spec.Components)
}

// doneCreating clears the mark of a release being created.
func (s *Server) doneCreating(d *dataset, id payload.ReleaseID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(d.creating, id)
}

// completeRelease asks the helper for a pending release, in.spec, over
// the reports the leader holds now, and on its acknowledgement charges
// and records the release (commit), which ends its pending state. A
// refusal by the helper that says it holds no charged release of that ID
// aborts it (abort); anything else — no answer, a lost reply, a failed
// charge or record here — leaves it pending, and the error says how to
// complete it.
func (s *Server) completeRelease(ctx context.Context, d *dataset, in *intent) (protocol.Message, error) {
	m := in.spec
	if d.verified != nil {
		// Every held report is decided, and the helper told, before the
		// leader offers its verified set; no report is decided while the
		// two servers agree.
		if err := s.verifyDataset(ctx, d); err != nil {
			return nil, s.stillPending(m, err)
		}
		s.verifying.Lock()
		defer s.verifying.Unlock()
	}
	p, err := s.newDraft(d, m, in.cost)
	if err != nil {
		return nil, s.stillPending(m, err)
	}
	agreed, err := s.agreeWithHelper(ctx, m, p.ids)
	if err != nil {
		return nil, s.abortOrKeep(d, m, err)
	}
	if err := s.checkAgreed(p, m, agreed); err != nil {
		return nil, s.stillPending(m, err)
	}
	resp, err := s.commit(p, m, &protocol.ReleaseCreated{Reports: s.analystReports(m.Mechanism, len(agreed))})
	if err != nil {
		return nil, s.stillPending(m, err)
	}
	s.mu.Lock()
	delete(d.pending, m.Release)
	s.mu.Unlock()
	return resp, nil
}

// abortOrKeep ends a pending release m the helper did not acknowledge
// with err: it is aborted (abort) when the helper refused it saying it
// holds neither a record nor a charge of it (ErrNotCharged: it looked,
// and it charges only what it acknowledges) and the leader has not
// charged it; any other refusal (another manifest, another release under
// the ID, a request for it running) or no answer leaves it pending.
func (s *Server) abortOrKeep(d *dataset, m *protocol.CreateRelease, err error) error {
	var refused *protocol.RemoteError
	if !errors.As(err, &refused) || !errors.Is(err, ErrNotCharged) {
		return s.stillPending(m, err)
	}
	if aerr := s.abort(d, m.Release); aerr != nil {
		return s.stillPending(m, errors.Join(err, aerr))
	}
	return fmt.Errorf("leader: release %v %w, nothing charged, no noise released: %w", m.Release, ErrReleaseAborted, err)
}

// abort deletes the pending record of release id of d, unless the
// leader has charged it (then the helper acknowledged it once, and a
// retry completes it from the helper's record).
func (s *Server) abort(d *dataset, id payload.ReleaseID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.notCharged(d, id); err != nil {
		return err
	}
	if err := s.cfg.Releases.DeleteRelease(d.Name, id); err != nil {
		return err
	}
	delete(d.pending, id)
	return nil
}

// notAsked is the error of an attempt at release m that failed before
// the leader asked the helper for it (the exchange of manifest digests):
// a pending release stays pending, a new one is refused.
func (s *Server) notAsked(m *protocol.CreateRelease, err error) error {
	s.mu.Lock()
	d := s.datasets[m.Dataset]
	pending := d != nil && d.pending[m.Release] != nil
	s.mu.Unlock()
	if pending {
		return s.stillPending(m, err)
	}
	return fmt.Errorf("leader: release %v refused, nothing recorded or charged: %w", m.Release, err)
}

// stillPending is the error of an attempt that left release m pending.
func (s *Server) stillPending(m *protocol.CreateRelease, err error) error {
	return fmt.Errorf("leader: release %v %w: %w; nothing is released, and its cost stays held until it completes: retry release %v with the same spec, or read it by its ID, to complete or abort it at both servers", m.Release, ErrReleasePending, err, m.Release)
}

// ResolvePending retries, at the leader, every pending release with the
// helper, completing or aborting each (a leader restarted after a crash
// or a lost link calls it once it reaches the helper again). It returns
// the errors of those that stay pending.
func (s *Server) ResolvePending(ctx context.Context) error {
	if s.cfg.Role != Leader {
		return nil
	}
	var specs []*protocol.CreateRelease
	s.mu.Lock()
	for _, d := range s.datasets {
		for _, in := range d.pending {
			specs = append(specs, in.spec)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, m := range specs {
		if _, err := s.leaderRelease(ctx, m); err != nil && !errors.Is(err, ErrReleaseAborted) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resolveForQuery completes a pending release before the leader answers
// a query of it: reading a release whose creation was cut off is how an
// analyst retries it.
func (s *Server) resolveForQuery(ctx context.Context, m *protocol.Query) error {
	s.mu.Lock()
	var spec *protocol.CreateRelease
	if d, ok := s.datasets[m.Dataset]; ok && d.pending[m.Release] != nil {
		spec = d.pending[m.Release].spec
	}
	s.mu.Unlock()
	if spec == nil {
		return nil
	}
	_, err := s.leaderRelease(ctx, spec)
	return err
}

// prepareRelease checks a release request at the helper
// (releaseCandidates), marks it as being created, and draws its seed and
// builds its noise (newDraft), so that after it only the agreement, the
// charge and the record can fail. A retry of a release this server has
// recorded is answered from the record instead (answer).
func (s *Server) prepareRelease(m *protocol.CreateRelease) (p *draft, answer *protocol.ReleaseCreated, err error) {
	s.mu.Lock()
	d, cost, answer, err := s.releaseCandidates(m)
	s.mu.Unlock()
	if d == nil {
		return nil, answer, err
	}
	if p, err = s.newDraft(d, m, cost); err != nil {
		s.doneCreating(d, m.Release)
		return nil, nil, err
	}
	return p, nil, nil
}

// newDraft draws a seed for release m of d and builds its noise, over
// the sorted report IDs this server holds now.
func (s *Server) newDraft(d *dataset, m *protocol.CreateRelease, cost ledger.Budget) (*draft, error) {
	p := &draft{d: d, cost: cost, rec: &releaseRecord{Dataset: m.Dataset, Release: m.Release, Mechanism: m.Mechanism, Components: m.Components}}
	var err error
	if p.rec.Seed, err = noise.NewSeed(); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	if p.noise, err = p.rec.noise(); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	s.mu.Lock()
	p.ids = make([]payload.ReportID, 0, len(d.reports))
	for id := range d.reports {
		p.ids = append(p.ids, id)
	}
	s.mu.Unlock()
	slices.SortFunc(p.ids, payload.CompareIDs)
	return p, nil
}

// releaseCandidates validates a release request at the helper against
// the dataset — its bins, its policy (releaseCost) and the rest of its
// budget (ledger.Admit) — and returns the dataset and the release's cost
// with the release marked as being created, or the answer from the
// record to a retry of a recorded release; the caller holds s.mu.
func (s *Server) releaseCandidates(m *protocol.CreateRelease) (*dataset, ledger.Budget, *protocol.ReleaseCreated, error) {
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, ledger.Budget{}, nil, err
	}
	if rel, recorded := d.releases[m.Release]; recorded {
		answer, err := s.retriedRelease(rel, m)
		return nil, ledger.Budget{}, answer, err
	}
	if d.creating[m.Release] {
		return nil, ledger.Budget{}, nil, fmt.Errorf("%s: release %v %w by another request", s.cfg.Role, m.Release, ErrReleaseBusy)
	}
	if err := s.notCharged(d, m.Release); err != nil {
		return nil, ledger.Budget{}, nil, err
	}
	// From here on, this server holds neither a record nor a charge of
	// the release: every refusal says so (ErrNotCharged).
	if m.Mechanism.Bins != d.Bins {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v: mechanism over %d bins, but dataset %q has %d", s.cfg.Role, m.Release, m.Mechanism.Bins, d.Name, d.Bins))
	}
	cost, err := releaseCost(d, m)
	if err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v refused: %w", s.cfg.Role, m.Release, err))
	}
	spent, err := s.cfg.Ledger.Spent(d.Name)
	if err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(err)
	}
	if err := ledger.Admit(false, spent, cost, d.Budget); err != nil {
		return nil, ledger.Budget{}, nil, nothingCharged(fmt.Errorf("%s: release %v refused: dataset %q: %w", s.cfg.Role, m.Release, d.Name, err))
	}
	d.creating[m.Release] = true
	return d, cost, nil, nil
}

// nothingCharged marks a helper's refusal of a release it holds neither
// a record nor a charge of (ErrNotCharged), which lets the leader abort
// it.
func nothingCharged(err error) error { return fmt.Errorf("%w (%w)", err, ErrNotCharged) }

// agree returns, at the helper, the report set of a release both servers
// hold and the answer to the leader: a request for its full list when
// the size and digest differ from its own (NeedIDs, and no set yet), and
// otherwise the intersection and the leader's IDs it lacks.
func (s *Server) agree(m *protocol.CreateRelease, ids []payload.ReportID) ([]payload.ReportID, *protocol.ReleaseCreated) {
	if len(m.IDs) == 0 && (len(ids) != m.Reports || payload.Digest(ids) != m.Digest) {
		return nil, &protocol.ReleaseCreated{NeedIDs: true}
	}
	agreed, resp := ids, &protocol.ReleaseCreated{}
	if len(m.IDs) != 0 {
		agreed, resp.Missing = intersect(m.IDs, ids)
	}
	resp.Reports = len(agreed)
	return agreed, resp
}

// commit charges and records a release, installs it and returns resp.
// The helper records before it charges, the leader charges before it
// records: the helper, which commits first, charges nothing unless its
// record is durable (a record whose charge a crash prevented is never
// loaded: loadReleases), and the leader, which commits only after the
// helper has, keeps its charge when its own record fails, with the
// release still pending; a retry then completes it at no further cost
// at either. A release recorded meanwhile is answered from its record.
func (s *Server) commit(p *draft, m *protocol.CreateRelease, resp *protocol.ReleaseCreated) (*protocol.ReleaseCreated, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rel, dup := p.d.releases[m.Release]; dup {
		return s.retriedRelease(rel, m)
	}
	rel := &release{id: m.Release, reports: p.rec.Reports, digest: payload.Digest(p.rec.Reports), mechanism: m.Mechanism, components: m.Components, noise: p.noise}
	if err := s.releaseSums(p.d, rel); err != nil {
		return nil, fmt.Errorf("%s: release %v: %w", s.cfg.Role, m.Release, err)
	}
	charge := func() error {
		if err := s.cfg.Ledger.Charge(p.d.Name, m.Release, p.cost, p.d.Budget); err != nil {
			return fmt.Errorf("%s: release %v refused: %w", s.cfg.Role, m.Release, err)
		}
		return nil
	}
	save := func() error {
		b, err := p.rec.MarshalBinary()
		if err == nil {
			err = s.cfg.Releases.SaveRelease(p.rec.Dataset, p.rec.Release, b)
		}
		if err != nil {
			return fmt.Errorf("%s: release %v not recorded: %w", s.cfg.Role, m.Release, err)
		}
		return nil
	}
	steps := []func() error{save, charge}
	if s.cfg.Role == Leader {
		steps = []func() error{charge, save}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	p.d.releases[m.Release] = rel
	return resp, nil
}

// retriedRelease answers a request for a release this server has
// recorded, rel, from the record: no new charge, no new seed, the record
// untouched. At the leader, it answers an analyst retrying after a lost
// reply; at the helper, the leader retrying after it crashed between the
// helper's acknowledgement and its own record. The spec must be the
// recorded one, and at the helper the leader must still offer every
// recorded report: the IDs beyond them are returned as missing, so the
// leader sums exactly the recorded set. Anything else is refused:
// answering with the same noise over another report set would reveal
// the difference of the two sums exactly.
func (s *Server) retriedRelease(rel *release, m *protocol.CreateRelease) (*protocol.ReleaseCreated, error) {
	if m.Mechanism != rel.mechanism || !slices.Equal(m.Components, rel.components) {
		return nil, fmt.Errorf("%s: release %v %w with another mechanism or components: ask for a new release ID", s.cfg.Role, m.Release, ErrReleaseExists)
	}
	resp := &protocol.ReleaseCreated{Reports: s.analystReports(rel.mechanism, len(rel.reports))}
	if s.cfg.Role == Leader {
		return resp, nil
	}
	if len(m.IDs) == 0 {
		if m.Reports != len(rel.reports) || m.Digest != payload.Digest(rel.reports) {
			return &protocol.ReleaseCreated{NeedIDs: true}, nil
		}
		return resp, nil
	}
	if _, unoffered := intersect(rel.reports, m.IDs); len(unoffered) != 0 {
		return nil, fmt.Errorf("%s: release %v %w over %d reports the leader no longer offers", s.cfg.Role, m.Release, ErrReleaseExists, len(unoffered))
	}
	_, resp.Missing = intersect(m.IDs, rel.reports)
	return resp, nil
}

// agreeWithHelper runs the release at the helper and returns the agreed
// report set: the leader's IDs minus those the helper lacks.
func (s *Server) agreeWithHelper(ctx context.Context, m *protocol.CreateRelease, ids []payload.ReportID) ([]payload.ReportID, error) {
	req := *m
	req.Reports, req.Digest, req.IDs = len(ids), payload.Digest(ids), nil
	resp, err := protocol.Call[*protocol.ReleaseCreated](ctx, s.cfg.Conn, s.cfg.Peer, &req)
	if err == nil && resp.NeedIDs {
		req.IDs = ids
		resp, err = protocol.Call[*protocol.ReleaseCreated](ctx, s.cfg.Conn, s.cfg.Peer, &req)
	}
	if err != nil {
		return nil, err
	}
	if resp.NeedIDs {
		return nil, fmt.Errorf("the helper asked again for the report IDs of release %v", m.Release)
	}
	agreed, extra := ids, []payload.ReportID(nil)
	if len(resp.Missing) != 0 { // else the helper holds them all: no set to build
		agreed, extra = intersect(ids, ids, resp.Missing...)
	}
	if len(extra) != len(resp.Missing) || len(agreed) != resp.Reports {
		return nil, fmt.Errorf("the helper's report set for release %v (%d reports, %d missing) is inconsistent with the leader's %d", m.Release, resp.Reports, len(resp.Missing), len(ids))
	}
	return agreed, nil
}

// intersect returns the IDs of want that are in have and not in drop
// (sorted, as want), and the others.
func intersect(want, have []payload.ReportID, drop ...payload.ReportID) (in, out []payload.ReportID) {
	set := make(map[payload.ReportID]bool, len(have))
	for _, id := range have {
		set[id] = true
	}
	for _, id := range drop {
		delete(set, id)
	}
	for _, id := range want {
		if set[id] {
			in = append(in, id)
		} else {
			out = append(out, id)
		}
	}
	slices.SortFunc(in, payload.CompareIDs)
	return in, out
}

// query answers a prefix query of a release: this server's share of the
// prefix sums plus its own noise; the leader adds the helper's answer.
// Additive shares are in the field of Prio3: each server adds its noise
// mapped into the field (verify.Lift), and the leader maps the sum back
// to a signed integer (verify.Lower).
func (s *Server) query(ctx context.Context, from transport.PeerID, m *protocol.Query) (protocol.Message, error) {
	if err := s.fromLeader(from, "query"); err != nil {
		return nil, err
	}
	if s.cfg.Role == Leader {
		if err := s.ledgerCheckedForQuery(ctx, m.Dataset); err != nil {
			return nil, err
		}
		if err := s.resolveForQuery(ctx, m); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	d, rel, err := s.queryInputs(m)
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.Role, err)
	}
	ans := &protocol.Answer{Reports: len(rel.reports), Mechanism: rel.mechanism}
	if d.Backend == Additive {
		ans.Field, err = s.fieldAnswer(d, rel, m)
	} else {
		ans.Values, err = s.ringAnswer(d, rel, m)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.Role, err)
	}
	if s.cfg.Role == Helper {
		return ans, nil
	}
	other, err := protocol.Call[*protocol.Answer](ctx, s.cfg.Conn, s.cfg.Peer, m)
	if err != nil {
		return nil, err
	}
	if len(other.Values) != len(ans.Values) || len(other.Field) != len(ans.Field) || other.Reports != len(rel.reports) || other.Mechanism != rel.mechanism {
		return nil, fmt.Errorf("leader: the helper answered %d values over %d reports with mechanism %+v, want %d over %d with %+v", max(len(other.Values), len(other.Field)/protocol.FieldSize), other.Reports, other.Mechanism, len(m.Prefixes), len(rel.reports), rel.mechanism)
	}
	values, err := combine(ans, other, d.verified != nil)
	if err != nil {
		return nil, fmt.Errorf("leader: %w", err)
	}
	return &protocol.Answer{Reports: s.analystReports(rel.mechanism, len(rel.reports)), Values: values, Mechanism: rel.mechanism}, nil
}

// ringAnswer is this server's noisy shares of the DCF release's prefix
// sums at m's prefixes: mod 2^64, or in F_p for a verified dataset, its
// noise mapped into the field (vdcf.Lift).
func (s *Server) ringAnswer(d *dataset, rel *release, m *protocol.Query) ([]uint64, error) {
	values, err := s.shareSums(d, rel, m)
	if err != nil {
		return nil, err
	}
	noise := rel.noise[m.Component]
	for j, i := range m.Prefixes {
		if d.verified != nil {
			values[j] = uint64(fss.Fp(values[j]).Add(vdcf.Lift(noise.PrefixNoise(i))))
		} else {
			values[j] += uint64(noise.PrefixNoise(i))
		}
	}
	return values, nil
}

// fieldAnswer is this server's noisy shares in the field of Prio3 of the
// additive release's prefix sums at m's prefixes, encoded.
func (s *Server) fieldAnswer(d *dataset, rel *release, m *protocol.Query) ([]byte, error) {
	s.mu.Lock()
	err := s.releaseSums(d, rel)
	sums := rel.field[m.Component]
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("release %v: %w", m.Release, err)
	}
	noise := rel.noise[m.Component]
	values := make(fp128.Vec, len(m.Prefixes))
	for j, i := range m.Prefixes {
		eta := verify.Lift(noise.PrefixNoise(i))
		values[j].Add(&sums[i-1], &eta)
	}
	return values.MarshalBinary()
}

// combine adds the leader's answer and the helper's: mod 2^64; in F_p
// for a verified DCF dataset (modP), mapped back to a signed integer
// (vdcf.Lower: exact while the noisy sum is within p/2 ≈ 2^63 of 0); or
// in the field of Prio3, mapped back likewise (verify.Lower: exact while
// it is within 2^64 of 0, far below p/2).
func combine(own, other *protocol.Answer, modP bool) ([]uint64, error) {
	if own.Field == nil {
		values := own.Values
		for j := range values {
			if !modP {
				values[j] += other.Values[j]
				continue
			}
			x := fss.Fp(other.Values[j])
			if !x.Valid() {
				return nil, fmt.Errorf("the helper's value %d = %d is not an element of F_p", j, other.Values[j])
			}
			values[j] = vdcf.Lower(fss.Fp(values[j]).Add(x))
		}
		return values, nil
	}
	a, b := make(fp128.Vec, len(own.Field)/protocol.FieldSize), make(fp128.Vec, len(other.Field)/protocol.FieldSize)
	if err := a.UnmarshalBinary(own.Field); err != nil {
		return nil, err
	}
	if err := b.UnmarshalBinary(other.Field); err != nil {
		return nil, fmt.Errorf("the helper's field values: %w", err)
	}
	values := make([]uint64, len(a))
	for j := range a {
		a[j].AddAssign(&b[j])
		var err error
		if values[j], err = verify.Lower(a[j]); err != nil {
			return nil, err
		}
	}
	return values, nil
}

// analystReports is the report count a server puts in its answers about
// a release of mechanism p over n reports: n, or 0 when it hides n
// (hidesReports).
func (s *Server) analystReports(p mechanism.Params, n int) int {
	if s.hidesReports(p) {
		return 0
	}
	return n
}

// hidesReports reports whether this server's answers about a release of
// mechanism p must not tell its number of reports n. The helper answers
// only the leader and tells it n: the servers know n anyway, and the
// leader checks the helper's n against its own. The leader answers
// analysts, and tells them n only under replace-one, where n is public;
// under add/remove n itself tells D from D + x, so analysts get 0 and
// normalise by a noisy total instead (ecdf.NewNormaliser).
func (s *Server) hidesReports(p mechanism.Params) bool {
	return s.cfg.Role == Leader && p.Relation != mechanism.ReplaceOne
}

// reportsHeld states the n reports of a release of mechanism p in an
// error, which the leader relays to the analyst from either server:
// exactly under replace-one, not at all under add/remove (hidesReports).
func reportsHeld(p mechanism.Params, n int) string {
	if p.Relation != mechanism.ReplaceOne {
		return "fewer reports"
	}
	return fmt.Sprintf("%d reports", n)
}

// queryInputs validates a query; the caller holds s.mu.
func (s *Server) queryInputs(m *protocol.Query) (*dataset, *release, error) {
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, nil, err
	}
	if err := d.ledgerAgreed(); err != nil {
		return nil, nil, fmt.Errorf("release %v not answered: %w", m.Release, err)
	}
	rel, ok := d.releases[m.Release]
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%w %v of dataset %q", ErrUnknownRelease, m.Release, d.Name)
	case rel.noise[m.Component] == nil:
		return nil, nil, fmt.Errorf("release %v does not cover component %v", m.Release, m.Component)
	}
	if err := checkPrefixes(m.Prefixes, d.Bins); err != nil {
		return nil, nil, fmt.Errorf("release %v: %w", m.Release, err)
	}
	return d, rel, nil
}

// shareSums returns Σ over the DCF release's reports of this server's
// share of payload_c·1[bin ≤ i], for each queried prefix i, read off the
// release's sums (releaseSums).
func (s *Server) shareSums(d *dataset, rel *release, m *protocol.Query) ([]uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.releaseSums(d, rel); err != nil {
		return nil, fmt.Errorf("release %v: %w", m.Release, err)
	}
	sums := rel.sums[m.Component]
	values := make([]uint64, len(m.Prefixes))
	for j, i := range m.Prefixes {
		values[j] = sums[i-1]
	}
	return values, nil
}

// releaseSums computes the release's sums from the dataset's aggregate,
// unless it has them (the caller holds s.mu), after checking, at every
// call, that the server holds every report of the release (checkBound).
// A release loaded after a restart gets them at its first query, once
// the stored reports have been accepted again.
func (s *Server) releaseSums(d *dataset, rel *release) error {
	if err := checkBound(rel.id, d.reports, rel.reports, rel.digest); err != nil {
		return err
	}
	switch {
	case d.verified != nil && rel.field == nil && rel.sums == nil:
		return d.verified.releaseSums(d.Name, d.reports, rel, s.cfg.Reports)
	case d.fold != nil && rel.sums == nil:
		sums, err := d.fold.over(d.reports, rel.reports, rel.components, d.Name, s.cfg.Reports)
		if err != nil {
			return err
		}
		rel.sums = sums
	}
	return nil
}
