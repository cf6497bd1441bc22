package server

// Release records: the stored form of a created or pending release and
// the loading of a dataset's records when a server opens (loadReleases).

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// releaseRecord is everything a server needs to answer later queries of a
// release with the same noise: the release's mechanism and components,
// the agreed report set, and the server's secret seed, from which every
// component's noise is derived (payload.ComponentSeed); and when the
// server created it (fedecdf status lists releases by it).
//
// The seed is a secret: whoever learns it can subtract this server's
// noise from every answer of the release. A record must be kept where
// only the server can read it (internal/store: a 0600 file).
type releaseRecord struct {
	Dataset    string
	Release    payload.ReleaseID
	Mechanism  mechanism.Params
	Components []payload.Component
	Reports    []payload.ReportID // sorted
	Seed       noise.Seed
	// Created is when this server drew the seed, in Unix seconds by its
	// clock; 0 when unknown: a record of version 3, written before
	// records held it.
	Created int64
}

// ReleaseStore keeps encoded release records (the server owns the
// format, a store keeps bytes): a release record, or the leader's
// pending record of a release the helper has not yet confirmed.
// SaveRelease and DeleteRelease must be durable before returning nil:
// the server acknowledges a release only after its record is, so a
// restarted server answers every acknowledged release with its original
// noise and never draws a second noise for it, and the leader asks the
// helper for a release only after its pending record is, so a restarted
// leader completes or aborts it.
type ReleaseStore interface {
	// SaveRelease records the encoded record of release of dataset; a
	// record of the same release is replaced.
	SaveRelease(dataset string, release core.ID, record []byte) error
	// DeleteRelease removes the record of release of dataset, if any.
	DeleteRelease(dataset string, release core.ID) error
	// LoadReleases calls fn with every record of dataset and the
	// release it was saved as.
	LoadReleases(dataset string, fn func(release core.ID, record []byte) error) error
}

// pendingRecordVersion is the first byte of the leader's encoded pending
// record (marshalPending), which tells it from a releaseRecord (whose
// first byte is releaseRecordVersion); pinned by
// TestPendingRecordKnownAnswer.
const pendingRecordVersion = 0x81

// marshalPending encodes the leader's pending record of release m: the
// version byte, then m's spec (dataset, release, mechanism, components)
// as a protocol.CreateRelease without reports. It holds no secret.
func marshalPending(m *protocol.CreateRelease) []byte {
	var w wire.Writer
	w.Uint8(pendingRecordVersion)
	w.Blob(encodeStoredRelease(releaseSpec(m)))
	return w.Bytes()
}

// releaseSpec is what a retry of release m must repeat exactly: its
// dataset, ID, mechanism and components.
func releaseSpec(m *protocol.CreateRelease) *protocol.CreateRelease {
	return &protocol.CreateRelease{Dataset: m.Dataset, Release: m.Release, Mechanism: m.Mechanism, Components: m.Components}
}

// parsePending decodes a record written by marshalPending; its errors
// match protocol.ErrMalformed.
func parsePending(b []byte) (*protocol.CreateRelease, error) {
	r := wire.NewReader(b)
	if v := r.Uint8("record version"); r.Err() == nil && v != pendingRecordVersion {
		return nil, protocol.Malformed(fmt.Errorf("pending record: version %d, want %d", v, pendingRecordVersion))
	}
	body := r.Blob("release", protocol.MaxMessageSize)
	if err := r.Finish(); err != nil {
		return nil, protocol.Malformed(fmt.Errorf("pending record: %w", err))
	}
	m, err := decodeStoredRelease(body)
	if err != nil {
		return nil, fmt.Errorf("pending record: %w", err)
	}
	if m.Reports != 0 || len(m.IDs) != 0 {
		return nil, protocol.Malformed(fmt.Errorf("pending record: holds a release with reports, want a release spec"))
	}
	return m, nil
}

// isPending reports whether a stored record is a pending record.
func isPending(b []byte) bool { return len(b) > 0 && b[0] == pendingRecordVersion }

// releaseRecordVersion is the first byte of an encoded releaseRecord.
// A record and the noise a server re-derives from its seed are pinned by
// TestReleaseRecordKnownAnswer; a change to either is a breaking change
// that bumps this version, so that an old record is refused rather than
// answered with other noise (an analyst could average the two draws).
// Version 2: the replace-one tree's Δ = L and scales rounded up.
// Version 3: the release inside is a protocol version 4 message.
// Version 4: the record holds its creation time (Created) after the
// seed. A version 3 record is still read, its time unknown: its seed and
// its noise are those of version 4, so nothing is answered differently
// (TestOldReleaseRecordReadable); a record without a time is written as
// version 3, so that every record read re-encodes to itself.
const releaseRecordVersion = 4

// untimedRecordVersion is the version of a record without its creation
// time (releaseRecordVersion 3).
const untimedRecordVersion = 3

// recordMessageVersion is the protocol version byte of the
// CreateRelease message inside a release or pending record, written as
// it was when releaseRecordVersion 3 and pendingRecordVersion were
// fixed: each record has a version of its own, and protocol versions
// that only add messages (5: status) leave the encoding of
// CreateRelease, which TestReleaseRecordKnownAnswer and
// TestPendingRecordKnownAnswer pin, unchanged, so stored releases stay
// readable across them.
const recordMessageVersion = 4

// encodeStoredRelease encodes m for a record: as protocol.Encode, with
// the version byte recordMessageVersion.
func encodeStoredRelease(m *protocol.CreateRelease) []byte {
	b := protocol.Encode(m)
	b[0] = recordMessageVersion
	return b
}

// decodeStoredRelease decodes the release encodeStoredRelease wrote.
func decodeStoredRelease(b []byte) (*protocol.CreateRelease, error) {
	if len(b) == 0 || b[0] != recordMessageVersion {
		return nil, protocol.Malformed(fmt.Errorf("the release is not encoded as message version %d", recordMessageVersion))
	}
	msg, err := protocol.Decode(slices.Concat([]byte{protocol.Version}, b[1:]))
	if err != nil {
		return nil, err
	}
	m, ok := msg.(*protocol.CreateRelease)
	if !ok {
		return nil, protocol.Malformed(fmt.Errorf("holds a %T, want a release", msg))
	}
	return m, nil
}

// MarshalBinary encodes r: a version byte, the seed, the creation time
// (Unix seconds, 8 bytes; absent from a version 3 record, written for a
// Created of 0), then the release as a protocol.CreateRelease message
// (its version byte recordMessageVersion) whose IDs are the agreed
// reports.
func (r *releaseRecord) MarshalBinary() ([]byte, error) {
	if err := r.checkSize(); err != nil {
		return nil, err
	}
	var w wire.Writer
	if r.Created == 0 {
		w.Uint8(untimedRecordVersion)
		w.Fixed(r.Seed[:])
	} else {
		w.Uint8(releaseRecordVersion)
		w.Fixed(r.Seed[:])
		w.Uint64(uint64(r.Created))
	}
	w.Blob(encodeStoredRelease(&protocol.CreateRelease{
		Dataset: r.Dataset, Release: r.Release, Mechanism: r.Mechanism, Components: r.Components,
		Reports: len(r.Reports), Digest: payload.Digest(r.Reports), IDs: r.Reports,
	}))
	return w.Bytes(), nil
}

// checkSize returns an error if the record cannot hold its reports.
func (r *releaseRecord) checkSize() error {
	if len(r.Reports) > protocol.MaxReports {
		return fmt.Errorf("release %v: %d reports exceed the %d a record holds", r.Release, len(r.Reports), protocol.MaxReports)
	}
	return nil
}

// parseReleaseRecord decodes a record written by MarshalBinary, checking
// its version and its report list against the recorded size and digest.
// The mechanism is checked when the server restores the release (its
// bins must be the dataset's before anything of that size is built).
// Its errors match protocol.ErrMalformed.
func parseReleaseRecord(b []byte) (*releaseRecord, error) {
	rec, err := decodeReleaseRecord(b)
	return rec, protocol.Malformed(err)
}

func decodeReleaseRecord(b []byte) (*releaseRecord, error) {
	r := wire.NewReader(b)
	v := r.Uint8("record version")
	if r.Err() == nil && v != releaseRecordVersion && v != untimedRecordVersion {
		return nil, fmt.Errorf("release record: version %d is not supported (want %d or %d): it was written by another fedecdf version, whose noise for the release would differ; read it with that version, or start on a new store", v, untimedRecordVersion, releaseRecordVersion)
	}
	var rec releaseRecord
	r.Fixed("seed", rec.Seed[:])
	if v == releaseRecordVersion {
		if rec.Created = int64(r.Uint64("creation time")); r.Err() == nil && rec.Created <= 0 {
			return nil, fmt.Errorf("release record: version %d with creation time %d, want a positive Unix time", v, rec.Created)
		}
	}
	body := r.Blob("release", protocol.MaxMessageSize)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("release record: %w", err)
	}
	m, err := decodeStoredRelease(body)
	if err != nil {
		return nil, fmt.Errorf("release record: %w", err)
	}
	switch {
	case len(m.IDs) != m.Reports || payload.Digest(m.IDs) != m.Digest:
		return nil, fmt.Errorf("release record %v: its %d report IDs do not match the recorded size %d and digest", m.Release, len(m.IDs), m.Reports)
	case !slices.IsSortedFunc(m.IDs, payload.CompareIDs):
		return nil, fmt.Errorf("release record %v: report IDs not sorted", m.Release)
	case len(m.Components) == 0:
		return nil, fmt.Errorf("release record %v: no components", m.Release)
	}
	rec.Dataset, rec.Release, rec.Mechanism, rec.Components, rec.Reports = m.Dataset, m.Release, m.Mechanism, m.Components, m.IDs
	return &rec, nil
}

// noise derives each component's noise from the record's seed, at the
// full scale of the component's mechanism.
func (r *releaseRecord) noise() (map[payload.Component]mechanism.Release, error) {
	rel := make(map[payload.Component]mechanism.Release, len(r.Components))
	for _, c := range r.Components {
		mech, err := payload.ComponentMechanism(r.Mechanism, c)
		if err != nil {
			return nil, err
		}
		rel[c] = mech.NewRelease(payload.ComponentSeed(r.Seed, c))
	}
	return rel, nil
}

// memoryReleases is a ReleaseStore held in memory only (tests,
// simulations): a server restarted with a new one forgets its releases.
type memoryReleases struct {
	mu      sync.Mutex
	records map[string]map[payload.ReleaseID][]byte
}

// newMemoryReleases returns an empty in-memory release store.
func newMemoryReleases() *memoryReleases {
	return &memoryReleases{records: make(map[string]map[payload.ReleaseID][]byte)}
}

// SaveRelease implements ReleaseStore.
func (s *memoryReleases) SaveRelease(dataset string, release payload.ReleaseID, record []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.records[dataset] == nil {
		s.records[dataset] = make(map[payload.ReleaseID][]byte)
	}
	s.records[dataset][release] = slices.Clone(record)
	return nil
}

// DeleteRelease implements ReleaseStore.
func (s *memoryReleases) DeleteRelease(dataset string, release payload.ReleaseID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records[dataset], release)
	return nil
}

// LoadReleases implements ReleaseStore.
func (s *memoryReleases) LoadReleases(dataset string, fn func(payload.ReleaseID, []byte) error) error {
	s.mu.Lock()
	records := maps.Clone(s.records[dataset])
	s.mu.Unlock()
	for id, b := range records {
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return nil
}

// loadRecord decodes the record saved as release of dataset.
func loadRecord(dataset string, release payload.ReleaseID, b []byte) (*releaseRecord, error) {
	r, err := parseReleaseRecord(b)
	if err != nil {
		return nil, err
	}
	if r.Release != release || r.Dataset != dataset {
		return nil, fmt.Errorf("the record saved as release %v of dataset %q is release %v of dataset %q", release, dataset, r.Release, r.Dataset)
	}
	return r, nil
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
		d.releases[r.Release] = &release{id: r.Release, reports: r.Reports, digest: payload.Digest(r.Reports), mechanism: r.Mechanism, components: r.Components, noise: componentNoise, created: r.Created}
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
