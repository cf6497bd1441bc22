package protocol

import (
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// Limits of a Status message.
const (
	MaxStatusErrors   = 64      // last errors of one server
	MaxStatusReleases = 1 << 16 // releases listed for one server
	MaxStatusReasons  = 16      // rejection reasons of one server
	MaxStatusProcs    = 256     // processes listed for one server
	maxServers        = 2
)

// StatusRequest asks a server how it is (fedecdf status): an analyst
// asks the leader, and the leader asks the helper, periodically (a
// liveness check) and for an analyst. From the leader it carries the
// leader's report set (every report it holds or, for a verified dataset,
// has decided): its size and digest, and, with Compare, the full sorted
// list, from which the helper finds the reports only one server holds
// (Status.Missing, and its own beyond the leader's).
type StatusRequest struct {
	Dataset string
	Reports int
	Digest  [32]byte
	Compare bool
	IDs     []payload.ReportID
}

// Status answers a StatusRequest. Servers holds the answering server's
// state first and, from the leader, the helper's after it when the
// leader reached it. Counts is false when the report counts are
// withheld (zero): the leader tells an analyst how many reports the
// servers hold only under replace-one, where n is public. Both is the
// number of reports both servers know (hold, or have decided) when
// Compared; from the helper to the leader, Missing lists the leader's
// IDs the helper does not know.
type Status struct {
	Dataset  string
	Counts   bool
	Compared bool
	Both     int
	Missing  []payload.ReportID
	Servers  []ServerState
}

// ServerState is one server's part of a Status. Reports is how many
// reports it counts (folded, or verified and accepted), Held how many of
// a verified dataset's it holds received and not yet decided. OneServer
// is how many of its reports held and not decided the other server did
// not know at the last comparison of their sets (at ComparedAt, Unix
// seconds; 0: never compared). Spent and
// Total are its ledger's (ε, δ). Errors are its last warnings and
// errors, oldest first, one line each. The leader's Peer fields say
// whether it reached the helper at its last check (PeerCheckedAt, Unix
// seconds) and why not; the helper's, when it last heard from the
// leader. Rejected counts the reports of a verified dataset the server
// rejected at verification, per reason, sorted by reason.
type ServerState struct {
	Role          string
	Version       string
	Reports       int
	Held          int
	OneServer     int
	ComparedAt    int64
	SpentEpsilon  float64
	SpentDelta    float64
	TotalEpsilon  float64
	TotalDelta    float64
	Releases      []ReleaseState
	Errors        []string
	PeerReachable bool
	PeerCheckedAt int64
	PeerError     string
	Rejected      []Rejection
	Processes     []ProcessState
}

// ProcessState is one process of a server run by several on one
// PostgreSQL database, as it last recorded itself (store.Process):
// whether it coordinated, its sealed-upload and libp2p listen
// addresses, the uploads it acknowledged since it started, and when it
// started and last recorded itself (Unix seconds). A server of one
// process lists none.
type ProcessState struct {
	ID          string
	Coordinator bool
	UploadAddr  string
	Listen      string
	Uploads     uint64
	Started     int64
	Seen        int64
}

// Rejection is how many reports a server rejected for one reason
// (verify.Reason: malformed, mismatch, proof, replay).
type Rejection struct {
	Reason string
	Count  int
}

// ReleaseState is one recorded release: its mechanism and components,
// the size of its report set (0 when withheld), what it charged, and
// when the server created it (Unix seconds; 0: unknown, a record written
// before records held it).
type ReleaseState struct {
	Release       payload.ReleaseID
	Mechanism     mechanism.Params
	Components    []payload.Component
	Reports       int
	ChargeEpsilon float64
	ChargeDelta   float64
	Created       int64
}

func (*StatusRequest) Kind() Kind { return KindStatusRequest }
func (*Status) Kind() Kind        { return KindStatus }

func (m *StatusRequest) encode(w *wire.Writer) {
	w.String(m.Dataset)
	w.Uint32(uint32(m.Reports))
	w.Fixed(m.Digest[:])
	writeBool(w, m.Compare)
	writeIDs(w, m.IDs)
}

func (m *StatusRequest) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	m.Reports = int(r.Uint32("reports"))
	r.Fixed("digest", m.Digest[:])
	m.Compare = readBool(r, "compare")
	m.IDs = readIDs(r, "report IDs")
}

func (m *Status) encode(w *wire.Writer) {
	w.String(m.Dataset)
	writeBool(w, m.Counts)
	writeBool(w, m.Compared)
	w.Uint32(uint32(m.Both))
	writeIDs(w, m.Missing)
	w.Uint32(uint32(len(m.Servers)))
	for i := range m.Servers {
		m.Servers[i].encode(w)
	}
}

func (m *Status) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	m.Counts = readBool(r, "counts")
	m.Compared = readBool(r, "compared")
	m.Both = int(r.Uint32("both"))
	m.Missing = readIDs(r, "missing report IDs")
	n := r.Uint32("servers")
	if n > maxServers {
		failf(r, "servers: %d exceed the %d of a deployment", n, maxServers)
		return
	}
	m.Servers = make([]ServerState, n)
	for i := range m.Servers {
		m.Servers[i].decode(r)
	}
}

func (s *ServerState) encode(w *wire.Writer) {
	w.String(s.Role)
	w.String(s.Version)
	w.Uint32(uint32(s.Reports))
	w.Uint32(uint32(s.Held))
	w.Uint32(uint32(s.OneServer))
	w.Uint64(uint64(s.ComparedAt))
	for _, f := range []float64{s.SpentEpsilon, s.SpentDelta, s.TotalEpsilon, s.TotalDelta} {
		w.Float64(f)
	}
	w.Uint32(uint32(len(s.Releases)))
	for _, rel := range s.Releases {
		rel.encode(w)
	}
	w.Uint32(uint32(len(s.Errors)))
	for _, e := range s.Errors {
		w.String(e)
	}
	writeBool(w, s.PeerReachable)
	w.Uint64(uint64(s.PeerCheckedAt))
	w.String(s.PeerError)
	w.Uint32(uint32(len(s.Rejected)))
	for _, rj := range s.Rejected {
		w.String(rj.Reason)
		w.Uint32(uint32(rj.Count))
	}
	w.Uint32(uint32(len(s.Processes)))
	for _, p := range s.Processes {
		w.String(p.ID)
		writeBool(w, p.Coordinator)
		w.String(p.UploadAddr)
		w.String(p.Listen)
		w.Uint64(p.Uploads)
		w.Uint64(uint64(p.Started))
		w.Uint64(uint64(p.Seen))
	}
}

func (s *ServerState) decode(r *wire.Reader) {
	s.Role = r.String("role", MaxNameLen)
	s.Version = r.String("version", MaxNameLen)
	s.Reports = int(r.Uint32("reports"))
	s.Held = int(r.Uint32("held reports"))
	s.OneServer = int(r.Uint32("one-server reports"))
	s.ComparedAt = int64(r.Uint64("compared at"))
	for _, f := range []*float64{&s.SpentEpsilon, &s.SpentDelta, &s.TotalEpsilon, &s.TotalDelta} {
		*f = r.Float64("ledger")
	}
	n := r.Uint32("releases")
	if n > MaxStatusReleases {
		failf(r, "releases: %d exceed the limit %d", n, MaxStatusReleases)
		return
	}
	for range n {
		var rel ReleaseState
		rel.decode(r)
		if r.Err() != nil {
			return
		}
		s.Releases = append(s.Releases, rel)
	}
	n = r.Uint32("errors")
	if n > MaxStatusErrors {
		failf(r, "errors: %d exceed the limit %d", n, MaxStatusErrors)
		return
	}
	for range n {
		s.Errors = append(s.Errors, r.String("error", MaxTextLen))
	}
	s.PeerReachable = readBool(r, "peer reachable")
	s.PeerCheckedAt = int64(r.Uint64("peer checked at"))
	s.PeerError = r.String("peer error", MaxTextLen)
	n = r.Uint32("rejection reasons")
	if n > MaxStatusReasons {
		failf(r, "rejection reasons: %d exceed the limit %d", n, MaxStatusReasons)
		return
	}
	for range n {
		s.Rejected = append(s.Rejected, Rejection{Reason: r.String("rejection reason", MaxNameLen), Count: int(r.Uint32("rejected"))})
	}
	n = r.Uint32("processes")
	if n > MaxStatusProcs {
		failf(r, "processes: %d exceed the limit %d", n, MaxStatusProcs)
		return
	}
	for range n {
		p := ProcessState{ID: r.String("process ID", MaxNameLen), Coordinator: readBool(r, "coordinator")}
		p.UploadAddr = r.String("process upload address", MaxNameLen)
		p.Listen = r.String("process listen address", MaxTextLen)
		p.Uploads = r.Uint64("process uploads")
		p.Started = int64(r.Uint64("process started"))
		p.Seen = int64(r.Uint64("process seen"))
		if r.Err() != nil {
			return
		}
		s.Processes = append(s.Processes, p)
	}
}

func (rel *ReleaseState) encode(w *wire.Writer) {
	w.Fixed(rel.Release[:])
	writeParams(w, rel.Mechanism)
	writeComponents(w, rel.Components)
	w.Uint32(uint32(rel.Reports))
	w.Float64(rel.ChargeEpsilon)
	w.Float64(rel.ChargeDelta)
	w.Uint64(uint64(rel.Created))
}

func (rel *ReleaseState) decode(r *wire.Reader) {
	r.Fixed("release ID", rel.Release[:])
	rel.Mechanism = readParams(r)
	rel.Components = readComponents(r)
	rel.Reports = int(r.Uint32("reports"))
	rel.ChargeEpsilon = r.Float64("charged epsilon")
	rel.ChargeDelta = r.Float64("charged delta")
	rel.Created = int64(r.Uint64("created at"))
}
