package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// CheckPeer exchanges manifest digests with the helper (leader only; nil
// without Config.Manifest) and returns ErrManifestMismatch, naming the
// parts that differ, if the helper runs another manifest. Until an
// exchange finds them equal again, the leader refuses uploads and
// queries; it repeats the exchange before every release.
//
// It then compares the ledgers of the two servers (checkLedgers,
// server/ledgercheck.go) and returns ErrLedgerRewound if one went back
// in time: until a check finds them equal again, both servers refuse
// to create or answer releases of that dataset.
func (s *Server) CheckPeer(ctx context.Context) error {
	if err := s.checkPeer(ctx); err != nil {
		return fmt.Errorf("leader: %w", err)
	}
	if err := s.checkLedgers(ctx); err != nil {
		return fmt.Errorf("leader: %w", err)
	}
	return nil
}

// checkPeer is CheckPeer without the role prefix.
func (s *Server) checkPeer(ctx context.Context) error {
	if s.cfg.Role != Leader || s.cfg.Manifest == nil {
		return nil
	}
	resp, err := protocol.Call[*protocol.ManifestDigest](ctx, s.cfg.Conn, s.cfg.Peer, &protocol.ManifestDigest{Fields: manifestFields(s.cfg.Manifest)})
	if err != nil {
		return fmt.Errorf("manifest check with the helper: %w", err)
	}
	return s.compareManifest(resp.Fields)
}

// ManifestMismatch returns the difference between the two servers'
// manifests that the last exchange of digests found, or nil.
func (s *Server) ManifestMismatch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mismatch
}

// manifestDigest answers the leader's manifest digests with the
// helper's own, and records whether they differ.
func (s *Server) manifestDigest(from transport.PeerID, m *protocol.ManifestDigest) (protocol.Message, error) {
	if s.cfg.Role != Helper {
		return nil, fmt.Errorf("leader: manifest digests are the leader's to send")
	}
	if err := s.fromLeader(from, "manifest digest"); err != nil {
		return nil, err
	}
	if s.cfg.Manifest != nil {
		_ = s.compareManifest(m.Fields) // the leader finds the same difference
	}
	return &protocol.ManifestDigest{Fields: manifestFields(s.cfg.Manifest)}, nil
}

// compareManifest records whether the other server's manifest digests,
// theirs, differ from this server's, and returns the difference.
func (s *Server) compareManifest(theirs []protocol.ManifestField) error {
	var err error
	if diff := diffFields(manifestFields(s.cfg.Manifest), theirs); len(diff) != 0 {
		err = fmt.Errorf("%w with the %s: %s differ; start both servers on the same manifest file", ErrManifestMismatch, s.peerRole(), strings.Join(diff, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mismatch, s.shown = err, err == nil
	return err
}

// manifestFields lists the digests of m, sorted by the part's name.
func manifestFields(m map[string][32]byte) []protocol.ManifestField {
	if m == nil {
		return nil
	}
	fields := make([]protocol.ManifestField, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		fields = append(fields, protocol.ManifestField{Name: name, Digest: m[name]})
	}
	return fields
}

// diffFields names, sorted, the parts whose digests differ between a and
// b or that only one of them has.
func diffFields(a, b []protocol.ManifestField) []string {
	digests := make(map[string][32]byte, len(a))
	for _, f := range a {
		digests[f.Name] = f.Digest
	}
	var diff []string
	for _, f := range b {
		if d, ok := digests[f.Name]; !ok || d != f.Digest {
			diff = append(diff, f.Name)
		}
		delete(digests, f.Name)
	}
	for name := range digests {
		diff = append(diff, name)
	}
	slices.Sort(diff)
	return diff
}

// peerRole names the other server.
func (s *Server) peerRole() Role {
	if s.cfg.Role == Leader {
		return Helper
	}
	return Leader
}

// manifestAgreed refuses a request while the servers' manifests are
// known to differ: every request at the helper but the leader's next
// digests, every upload, batch and query at the leader (whose release
// requests exchange digests afresh: leaderRelease).
func (s *Server) manifestAgreed(msg protocol.Message) error {
	switch msg.(type) {
	case *protocol.ManifestDigest:
		return nil
	case *protocol.CreateRelease:
		if s.cfg.Role == Leader {
			return nil
		}
	}
	if err := s.ManifestMismatch(); err != nil {
		return fmt.Errorf("%s: refused: %w", s.cfg.Role, err)
	}
	return nil
}

// leaderShown refuses, at the helper, a release before the leader has
// shown manifest digests equal to its own.
func (s *Server) leaderShown(m *protocol.CreateRelease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Manifest != nil && !s.shown {
		return fmt.Errorf("helper: release %v refused: %w: the leader has not shown its manifest digests since this helper started (a leader of another fedecdf version?)", m.Release, ErrManifestMismatch)
	}
	return nil
}
