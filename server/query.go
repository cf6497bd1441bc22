package server

// Query: an analyst's prefix query of a created release, answered by each
// server's share of the prefix sums plus its noise, and combined at the
// leader.

import (
	"context"
	"fmt"

	"github.com/cloudflare/circl/vdaf/prio3/arith/fp128"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

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
