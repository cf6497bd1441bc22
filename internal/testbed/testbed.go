package testbed

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/aggregation/remote"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// Peer IDs of a Deployment.
const (
	leaderPeer  transport.PeerID = "leader"
	helperPeer  transport.PeerID = "helper"
	analystPeer transport.PeerID = "analyst"
)

// partyPeer returns the peer ID of party k.
func partyPeer(k int) transport.PeerID { return transport.PeerID(fmt.Sprintf("party-%d", k)) }

// Config configures a one-process deployment.
type Config struct {
	Backend string // "plain", "additive" or "dcf"
	Dataset string
	Bins    int
	Budget  mechanism.Budget
	// Policy is the privacy policy both servers enforce on every
	// release: its neighbouring relation (the zero value: replace-one),
	// the mechanisms, δ and ε a release may ask for (server.Policy; the
	// zero value allows any pure ε-DP mechanism). The trusted curator of
	// the plain backend checks only the relation: every release of a
	// Deployment must be made under it (Deployment.NewRelease), so that its
	// stated guarantee and what the analyst learns of n (Release.Reports)
	// are those of the dataset.
	Policy     server.Policy
	MinReports int
	// Ledgers of the leader and the helper (the curator uses the
	// leader's); nil means in memory.
	LeaderLedger, HelperLedger ledger.Ledger
	// Unverified runs the dcf backend without verification: parties
	// upload Z_2^64 keys of their whole payload, folded unchecked
	// (server.Dataset.Unverified).
	Unverified bool
	// Probability has the dataset collect the probability component
	// (server.Dataset.Probability): the verified dcf backend's reports
	// then carry it, verified, and releases may ask for it. The additive
	// backend cannot; the unverified dcf backend's keys always carry it.
	Probability bool
	// Malicious is the number of malicious parties (verified backends):
	// each uploads an invalid report, of the kinds verify.Forgeries
	// (additive) or vdcf.Scheme.Forgeries (dcf) in turn, from its own peer; the
	// servers reject them all.
	Malicious int
	// Rand seeds the malicious parties' choices (nil: crypto/rand).
	Rand *rand.Rand
}

// Deployment is parties, two servers and an analyst in one process,
// talking over an in-process transport that counts their traffic. Its
// UStat is the analyst's: a curator.Curator for the plain backend, a
// remote.Client otherwise.
type Deployment struct {
	aggregation.UStat
	Network        *transport.Network
	Leader, Helper *server.Server
	Parties        []*party.Party
	neighbours     mechanism.Relation
	dataset        string
	unverified     bool
	verifyBytes    int64 // between the servers, while verifying
}

// NewRelease implements aggregation.UStat, refusing a release under
// another neighbouring relation than the dataset's (Config.Policy.Relation).
func (l *Deployment) NewRelease(ctx context.Context, spec aggregation.ReleaseSpec) (*aggregation.Release, error) {
	if r := spec.Mechanism.Relation; r != l.neighbours {
		return nil, fmt.Errorf("testbed: release under %s neighbours refused: %w: the dataset is released under %s neighbours", r, server.ErrPolicy, l.neighbours)
	}
	return l.UStat.NewRelease(ctx, spec)
}

// New deploys cfg and has every party report: upload its verified DCF
// report (dcf), its DCF keys (unverified dcf) or its verified report
// (additive), or hand its instance to the curator (plain); with a
// verified backend the servers then verify every report.
func New(ctx context.Context, cfg Config, parties []*party.Party) (*Deployment, error) {
	if cfg.LeaderLedger == nil {
		cfg.LeaderLedger = ledger.NewMemory()
	}
	if cfg.HelperLedger == nil {
		cfg.HelperLedger = ledger.NewMemory()
	}
	l := &Deployment{Network: transport.NewNetwork(), Parties: parties, neighbours: cfg.Policy.Relation, dataset: cfg.Dataset, unverified: cfg.Unverified}
	if cfg.Backend == "plain" {
		p, err := curator.New(cfg.Dataset, cfg.Bins, parties, cfg.Budget, cfg.LeaderLedger)
		if err != nil {
			return nil, err
		}
		l.UStat = p
		return l, nil
	}
	backend := server.Backend(cfg.Backend)
	if cfg.Unverified && backend != server.DCF {
		return nil, fmt.Errorf("testbed: only the dcf backend runs unverified, not %q", cfg.Backend)
	}
	if cfg.Malicious != 0 && cfg.Unverified {
		return nil, fmt.Errorf("testbed: %d malicious parties: an unverified dcf deployment would count their reports; verify them", cfg.Malicious)
	}
	if err := l.servers(cfg); err != nil {
		return nil, err
	}
	group := &localParties{net: l.Network, dataset: cfg.Dataset, probability: cfg.Probability, parties: parties}
	upload := func(ctx context.Context, k int, s party.Servers) error {
		switch {
		case cfg.Unverified:
			return parties[k].UploadKeys(ctx, s)
		case backend == server.DCF:
			return parties[k].UploadVerifiedKeys(ctx, s)
		}
		return parties[k].UploadVerified(ctx, s)
	}
	// With verification the servers verify after every verifyEvery
	// uploads, so that they hold at most that many undecided ones.
	block := len(parties)
	if !cfg.Unverified {
		block = verifyEvery
	}
	for first := 0; first < len(parties); first += block {
		if err := group.each(ctx, first, min(block, len(parties)-first), upload); err != nil {
			return nil, err
		}
		if err := l.verify(ctx, cfg); err != nil {
			return nil, err
		}
	}
	if !cfg.Unverified {
		if err := l.malicious(ctx, cfg, group); err != nil {
			return nil, err
		}
		if err := l.verify(ctx, cfg); err != nil {
			return nil, err
		}
	}
	var err error
	l.UStat, err = remote.New(backend, l.Network.Conn(analystPeer), leaderPeer, cfg.Dataset)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// verifyEvery is the number of uploads after which a verified local
// deployment has its servers verify what they hold (a variable for the
// tests).
var verifyEvery = 1 << 14

// verify has the leader verify every report the servers hold (nothing
// for an unverified deployment), adding the bytes the servers exchange.
func (l *Deployment) verify(ctx context.Context, cfg Config) error {
	if cfg.Unverified {
		return nil
	}
	before := l.Network.Stats(helperPeer)
	if err := l.Leader.Verify(ctx); err != nil {
		return err
	}
	after := l.Network.Stats(helperPeer)
	l.verifyBytes += after.BytesSent + after.BytesReceived - before.BytesSent - before.BytesReceived
	return nil
}

// servers starts the leader and the helper of cfg, sharing a fresh
// verification key.
func (l *Deployment) servers(cfg Config) error {
	// Both servers receive every report, so every release is over all
	// of them and no key is ever folded again: the servers keep none.
	ds := server.Dataset{Name: cfg.Dataset, Backend: server.Backend(cfg.Backend), Unverified: cfg.Unverified, Probability: cfg.Probability, Bins: cfg.Bins, Budget: cfg.Budget, Policy: cfg.Policy, MinReports: cfg.MinReports}
	var key [verify.KeySize]byte
	if _, err := crand.Read(key[:]); err != nil {
		return fmt.Errorf("testbed: verification key: %w", err)
	}
	var err error
	l.Leader, err = server.New(server.Config{Role: server.Leader, Peer: helperPeer, Conn: l.Network.Conn(leaderPeer), Ledger: cfg.LeaderLedger, Reports: server.NoReports, Datasets: []server.Dataset{ds}, VerifyKey: key})
	if err != nil {
		return err
	}
	l.Helper, err = server.New(server.Config{Role: server.Helper, Peer: leaderPeer, Ledger: cfg.HelperLedger, Reports: server.NoReports, Datasets: []server.Dataset{ds}, VerifyKey: key})
	if err != nil {
		return err
	}
	l.Network.Register(leaderPeer, l.Leader.Handle)
	l.Network.Register(helperPeer, l.Helper.Handle)
	return nil
}

// malicious has cfg.Malicious parties, after the honest ones, upload an
// invalid report each (verify.Forgeries or vdcf.Scheme.Forgeries in turn, a
// random record), from their own peers; a refusal at upload is expected
// (malformed or mismatched shares).
func (l *Deployment) malicious(ctx context.Context, cfg Config, group *localParties) error {
	rng := cfg.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	forge, err := forger(cfg.Backend, cfg.Bins, cfg.Probability)
	if err != nil {
		return fmt.Errorf("testbed: %w", err)
	}
	uploads := make([]func(context.Context, party.Servers) error, cfg.Malicious)
	for k := range uploads {
		id, err := payload.NewID()
		if err != nil {
			return fmt.Errorf("testbed: %w", err)
		}
		if uploads[k], err = forge(k, id, rng.IntN(cfg.Bins), rng.IntN(2) == 1, rng); err != nil {
			return fmt.Errorf("testbed: %w", err)
		}
	}
	first := len(group.parties)
	return group.each(ctx, first, len(uploads), func(ctx context.Context, k int, s party.Servers) error {
		if err := uploads[k-first](ctx, s); err != nil && !errors.Is(err, verify.ErrMalformed) && !errors.Is(err, verify.ErrMismatch) {
			return err
		}
		return nil
	})
}

// forgery makes the k-th malicious party's invalid report of a record
// and returns its upload.
type forgery func(k int, id payload.ID, bin int, label bool, rng *rand.Rand) (func(context.Context, party.Servers) error, error)

// forger returns the forgeries of a verified backend, its kinds in turn.
func forger(backend string, bins int, probability bool) (forgery, error) {
	if backend == string(server.Additive) {
		s, err := verify.New(bins)
		return forgeWith(s, verify.Forgeries(), func(r verify.Report) party.Report {
			return party.Report{ID: r.Nonce, Public: r.Public, Shares: r.Shares}
		}), err
	}
	s, err := vdcf.New(bins)
	if probability {
		s, err = vdcf.NewWithProbability(bins)
	}
	if err != nil {
		return nil, err
	}
	return forgeWith(s, s.Forgeries(), func(r vdcf.Report) party.Report { return party.Report{ID: r.Nonce, Shares: r.Shares} }), nil
}

// forgeWith is the forgery of a scheme that forges reports of type R of
// kinds K, uploaded as upload makes them.
func forgeWith[K, R any](s interface {
	Forge(k K, nonce [16]byte, bin int, label bool, rnd io.Reader, rng *rand.Rand) (R, error)
}, kinds []verify.Kind[K], upload func(R) party.Report) forgery {
	return func(k int, id payload.ID, bin int, label bool, rng *rand.Rand) (func(context.Context, party.Servers) error, error) {
		r, err := s.Forge(kinds[k%len(kinds)].Kind, id, bin, label, crand.Reader, rng)
		return func(ctx context.Context, srv party.Servers) error { return party.Upload(ctx, srv, upload(r)) }, err
	}
}

// Rejected returns the reports the servers rejected, per reason
// (verify.Reason), as the leader counted them; the helper counts the
// same. Nil for the plain and unverified dcf backends.
func (l *Deployment) Rejected() (map[string]int, error) {
	if l.Leader == nil || l.unverified {
		return nil, nil
	}
	return l.Leader.Rejected(l.dataset)
}

// localParties runs the parties of a Deployment, each over its own
// connection, on GOMAXPROCS workers.
type localParties struct {
	net         *transport.Network
	dataset     string
	probability bool // the dataset collects the probability
	parties     []*party.Party
}

// each runs fn for k = first, …, first+n−1, with party k's servers, and
// returns the first error.
func (g *localParties) each(ctx context.Context, first, n int, fn func(context.Context, int, party.Servers) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				s := party.Servers{Conn: g.net.Conn(partyPeer(k)), Leader: leaderPeer, Helper: helperPeer, Dataset: g.dataset, Probability: g.probability}
				if err := fn(ctx, k, s); err != nil {
					select {
					case errs <- err:
						cancel()
					default:
					}
				}
			}
		}()
	}
feed:
	for k := first; k < first+n; k++ {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// Cost is the traffic of a Deployment so far.
type Cost struct {
	BytesPerParty   float64 // mean over parties of bytes sent + received
	PartyRounds     float64 // mean over parties of round trips initiated
	LeaderBytes     int64   // bytes sent + received by the leader
	HelperBytes     int64
	AnalystBytes    int64
	AnalystRounds   int64 // round trips the analyst initiated
	ServerRounds    int64 // round trips between the servers
	TotalPartyBytes int64
	TotalBytesSent  int64 // by every peer
	// VerifyBytes is the traffic between the servers while the leader
	// verified the reports with the helper (New), sent and received.
	VerifyBytes int64
}

// Cost returns the traffic counted by the transport.
func (l *Deployment) Cost() Cost {
	var c Cost
	for k := range l.Parties {
		s := l.Network.Stats(partyPeer(k))
		c.TotalPartyBytes += s.BytesSent + s.BytesReceived
		c.PartyRounds += float64(s.Calls)
	}
	if n := len(l.Parties); n > 0 {
		c.BytesPerParty = float64(c.TotalPartyBytes) / float64(n)
		c.PartyRounds /= float64(n)
	}
	leader, helper, analyst := l.Network.Stats(leaderPeer), l.Network.Stats(helperPeer), l.Network.Stats(analystPeer)
	c.LeaderBytes = leader.BytesSent + leader.BytesReceived
	c.HelperBytes = helper.BytesSent + helper.BytesReceived
	c.AnalystBytes = analyst.BytesSent + analyst.BytesReceived
	c.AnalystRounds = analyst.Calls
	c.ServerRounds = leader.Calls
	c.VerifyBytes = l.verifyBytes
	for _, id := range l.Network.Peers() {
		c.TotalBytesSent += l.Network.Stats(id).BytesSent
	}
	return c
}
