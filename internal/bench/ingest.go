package bench

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
)

// Load is an ingestion load (fedecdf bench ingest): Parties reports of
// DemoInstances(Parties, Seed), at most Concurrency in flight. To a
// server with an upload address in the manifest each is sealed in one
// TCP connection (Hosts aside); otherwise each comes from a fresh
// libp2p host of its own (Hosts 0: a connection and Noise handshake per
// party) or is multiplexed over Hosts hosts (one connection to each
// server per host, a stream per report).
type Load struct {
	Parties, Hosts, Concurrency int
	Seed                        uint64
	Transport                   p2p.Config
	// Acked, if not nil, is called after each report both servers
	// acknowledged (a progress display).
	Acked func()
	// Manifests, if not empty, are the manifests the parties use in
	// turn, party k Manifests[k mod len] (the same deployment with
	// other upload addresses: processes of a role), instead of m.
	Manifests []*manifest.Manifest
}

// Sent is what a load sent: by report ID, the digest of each report's
// upload to the leader and to the helper and whether both acknowledged
// it; how many reports both acknowledged, and how many failed.
type Sent struct {
	reports       map[payload.ReportID]*sentReport
	Acked, Failed int
	UploadBytes   int // the encoded size of one upload
}

// sentReport is one report of a load.
type sentReport struct {
	digest [2][sha256.Size]byte // of the upload to the leader, to the helper
	acked  bool
}

// RunLoad uploads l's reports to the servers of m (in the manifest's
// upload mode) and records what it sent. An upload that still fails
// after the transport's retries counts in Failed (its report may or may
// not be stored); RunLoad itself fails only when a shared host cannot
// be started.
func RunLoad(ctx context.Context, m *manifest.Manifest, l Load) (*Sent, error) {
	hosts := make([]*client.Party, l.Hosts)
	for k := range hosts {
		p, err := client.NewParty(m, nil, l.Transport)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		hosts[k] = p
	}
	s := &Sent{reports: make(map[payload.ReportID]*sentReport, l.Parties)}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, max(l.Concurrency, 1))
	)
	for k, x := range client.DemoInstances(l.Parties, l.Seed) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var p *client.Party
			if len(hosts) > 0 {
				p = hosts[k%len(hosts)]
			}
			mk := m
			if len(l.Manifests) > 0 {
				mk = l.Manifests[k%len(l.Manifests)]
			}
			r, err := sendOne(ctx, mk, p, l.Transport, x)
			mu.Lock()
			defer mu.Unlock()
			if r != nil {
				leader := protocol.Encode(r.Leader)
				s.reports[r.ID] = &sentReport{digest: [2][sha256.Size]byte{sha256.Sum256(leader), sha256.Sum256(protocol.Encode(r.Helper))}, acked: err == nil}
				s.UploadBytes = len(leader)
			}
			if r == nil || err != nil {
				s.Failed++
				return
			}
			s.Acked++
			if l.Acked != nil {
				l.Acked()
			}
		})
	}
	wg.Wait()
	return s, nil
}

// sendOne prepares and sends the report of x from p, or from a host of
// its own when p is nil. The report is returned once prepared, also when
// sending it failed.
func sendOne(ctx context.Context, m *manifest.Manifest, p *client.Party, tc p2p.Config, x party.Instance) (*client.Report, error) {
	if p == nil {
		var err error
		if p, err = client.NewParty(m, nil, tc); err != nil {
			return nil, err
		}
		defer p.Close()
	}
	r, err := p.NewReport(x)
	if err != nil {
		return nil, err
	}
	_, err = p.Send(ctx, r)
	return r, err
}

// Check compares the stores of the stopped servers with what the load
// sent: lost counts the reports both servers acknowledged whose upload
// a store does not hold byte for byte; duplicated counts the entries of
// the stores that are not a distinct sent report (an ID never sent, or
// the upload of another entry again under another ID).
func (s *Sent) Check(dataset, leaderStore, helperStore string) (lost, duplicated int, err error) {
	missing := map[payload.ReportID]bool{}
	for k, path := range []string{leaderStore, helperStore} {
		d, err := s.checkStore(dataset, path, k, missing)
		if err != nil {
			return 0, 0, err
		}
		duplicated += d
	}
	return len(missing), duplicated, nil
}

// checkStore compares the store at path with the uploads sent to server
// k (0 the leader, 1 the helper), adding the acknowledged reports it
// does not hold to missing, and returns its duplicated entries.
func (s *Sent) checkStore(dataset, path string, k int, missing map[payload.ReportID]bool) (duplicated int, err error) {
	st, err := store.OpenBackend(path, "")
	if err != nil {
		return 0, err
	}
	defer st.Close()
	held := make(map[payload.ReportID]bool, len(s.reports))
	seen := make(map[[sha256.Size]byte]bool, len(s.reports))
	err = st.Reports(dataset, func(id payload.ReportID, upload []byte) error {
		d := sha256.Sum256(upload)
		r, sent := s.reports[id]
		switch {
		case !sent || seen[d]:
			duplicated++
		case r.digest[k] == d:
			held[id] = true
		}
		seen[d] = true
		return nil
	})
	for id, r := range s.reports {
		if r.acked && !held[id] {
			missing[id] = true
		}
	}
	return duplicated, err
}
