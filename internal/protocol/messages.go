package protocol

import (
	"context"
	"fmt"
	"math"

	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/internal/wire"
)

// Version is the first byte of every message. Every encoding is pinned
// by TestEncodingKnownAnswer; changing one is a breaking change that
// bumps Version, and a peer speaking another version is refused. Version
// 3: Shares carry the digest of their batch (Shares.Batch). Version 4:
// the servers exchange their manifests' digests (ManifestDigest). Version
// 5: StatusRequest and Status (fedecdf status). Version 6: the additive
// backend's one-shot verified upload (Upload.Public, Upload.Share), the
// servers' verification exchange (Prepare, Prepared, Decide) and their
// answers in the field of Prio3 (Answer.Field), in place of enrolment and
// per-query share batches (OpenQuery and Shares are gone). Version 7
// (with version 6 never released, both in one): the servers' rejected
// counts per reason in Status (ServerState.Rejected), and the verified
// DCF backend — an Upload's Share may carry a verified DCF report share
// (internal/vdcf), and a Decide item may carry the leader's message when
// its verdict is VerdictOK. Version 8: the verified DCF share of an
// Upload is internal/vdcf's format v4 (a seed per server and explicit
// shares of the determined values; one challenge vector per server
// key), so a server or party of version 7 is refused by version rather
// than failing every report's check. Version 9: an Error carries the
// codes of the sentinels it wraps (internal/errcode), and callers match
// a refusal by its codes, never by its text; LedgerCheck, the servers'
// comparison of their ledgers' release counts (a server whose store was
// restored from an older backup is found out). Version 10: a Status
// lists when each release was created (ReleaseState.Created); the
// verified DCF share of an Upload is internal/vdcf's format v5 (two
// checks per report, each with its own MAC component and correlated
// randomness, and challenges drawn per report), and the verification
// messages are twice as long, so a server or party of version 9 is
// refused by version. Version 11: a Status lists each process of a
// server run by several on one database (ServerState.Processes).
const Version = 11

// Limits on decoded messages: anything larger is rejected before it is
// allocated.
const (
	MaxMessageSize = 1 << 28 // bytes of one encoded message
	MaxNameLen     = 256     // dataset and mechanism names
	MaxTextLen     = 4096    // error texts
	MaxPrefixes    = 1 << 22 // prefixes of one query
	MaxKeySize     = 1 << 20 // bytes of one DCF key
	MaxReports     = 1 << 22 // report IDs in one message
	MaxBins        = 1 << 40 // N of a mechanism spec
	MaxFields      = 64      // parts of a ManifestDigest
	MaxShareSize   = 1 << 27 // bytes of one verified input share
	MaxBatch       = 1 << 16 // reports of one verification exchange
	FieldSize      = 16      // bytes of one element of Answer.Field
)

// Kind is the second byte of every message.
type Kind uint8

// Message kinds.
const (
	KindError Kind = 1 + iota
	KindAck
	KindUpload
	KindPrepare
	KindPrepared
	KindCreateRelease
	KindReleaseCreated
	KindQuery
	KindAnswer
	KindManifestDigest
	KindStatusRequest
	KindStatus
	KindDecide
	KindLedgerCheck
)

// Message is one protocol message.
type Message interface {
	Kind() Kind
	encode(w *wire.Writer)
	decode(r *wire.Reader)
}

// Error is the response to a request that failed: Codes are the codes
// of the sentinel errors the refusal wraps (internal/errcode, at most
// errcode.MaxCodes), which the caller matches with errors.Is (see
// RemoteError); Text says why, for people.
type Error struct {
	Codes []errcode.Code
	Text  string
}

// Ack acknowledges an upload or share; Duplicate reports that the server
// already held this report and dropped the copy.
type Ack struct{ Duplicate bool }

// Upload carries one party's report to one server: its DCF key share
// for the unverified dcf backend; for the verified dcf backend its share
// of the verified DCF report (package internal/vdcf) in Share, with the
// report ID as the nonce; for the additive backend its verified report
// (package internal/verify): the Prio3 public share and this server's
// input share, with the report ID as the Prio3 nonce.
type Upload struct {
	Dataset string
	Report  payload.ReportID
	Key     []byte
	Public  []byte
	Share   []byte
}

// Verdict is a server's word on one report in the verification exchange.
type Verdict uint8

// Verdicts. VerdictOK: in Prepare and Prepared, the server prepared the
// report and Item.Message is its verifier message; in Decide, the report
// is accepted at the leader. VerdictMissing: the helper holds no upload
// of the report (it stays unverified). The others name the rejection
// (internal/verify: ErrMalformed, ErrMismatch, ErrProof, ErrReplay).
const (
	VerdictOK Verdict = iota
	VerdictMissing
	VerdictMalformed
	VerdictMismatch
	VerdictProof
	VerdictReplay
	numVerdicts
)

// Item is one report in a verification exchange: its ID, the sending
// server's verdict and, with VerdictOK in Prepare and Prepared, its
// verifier message.
type Item struct {
	Report  payload.ReportID
	Verdict Verdict
	Message []byte
}

// Prepare is the leader's half of the verification of a batch of
// additive reports: for each, its verdict after preparing its own input
// share and its verifier message.
type Prepare struct {
	Dataset string
	Items   []Item
}

// Prepared is the helper's answer to Prepare: its own item for each
// report, in the same order, its verdict being its decision from both
// verifier messages (or VerdictMissing).
type Prepared struct {
	Items []Item
}

// Decide tells the helper the leader's final verdict on reports it
// prepared, with, for an accepted report of a verified DCF dataset, the
// leader's second verifier message (internal/vdcf: the helper decides
// from it too): the helper counts a report only if both verdicts are
// VerdictOK, so a report counts at both servers or at neither.
type Decide struct {
	Dataset string
	Items   []Item
}

// CreateRelease asks a server to fix a new release: the mechanism, the
// components it covers, and the report set it is computed over, given by
// its size and digest, and by the full list of IDs once the servers'
// sets are found to differ.
type CreateRelease struct {
	Dataset    string
	Release    payload.ReleaseID
	Mechanism  mechanism.Params
	Components []payload.Component
	Reports    int
	Digest     [32]byte
	IDs        []payload.ReportID
}

// ReleaseCreated answers CreateRelease. NeedIDs asks the leader for its
// full list of report IDs; otherwise Missing lists the leader's IDs the
// helper does not hold, and Reports is the size of the agreed set — to
// the analyst only under replace-one, where it is public; the leader
// sends analysts 0 for an add/remove release (server: hidesReports).
type ReleaseCreated struct {
	Reports int
	NeedIDs bool
	Missing []payload.ReportID
}

// Query asks for the noisy prefix sums of one component of a release at
// the given prefixes.
type Query struct {
	Dataset   string
	Release   payload.ReleaseID
	Component payload.Component
	Prefixes  []int
}

// Answer carries, per queried prefix, a server's noisy share (helper to
// leader) or the combined noisy sum (leader to analyst), as two's
// complement mod 2^64, the number of reports summed (0 from the leader
// to the analyst under add/remove, where it is private: see
// ReleaseCreated), and the mechanism the release was created with (its
// noise pattern and guarantee), so a reader of an old release need not
// know how it was made. For the additive backend the helper answers the
// leader in the field of Prio3 instead: Field holds one 16-byte element
// per prefix (fp128 encoding) and Values is empty.
type Answer struct {
	Reports   int
	Values    []uint64
	Field     []byte
	Mechanism mechanism.Params
}

// ManifestDigest carries a server's digests of the parts of its
// deployment manifest (package deploy names and computes them): the
// leader sends its own to the helper at first contact and before every
// release, and the helper answers with its own, so that each can name
// the parts in which the two differ.
type ManifestDigest struct {
	Fields []ManifestField
}

// LedgerCheck compares the two servers' ledgers of a dataset. The leader
// sends the number of releases its ledger has charged that are not among
// its pending releases, listed in Pending; the helper answers with its
// own count of the releases it has charged outside Pending (and no
// Pending). Nothing is ever refunded, so the count only grows, and both
// servers charge the same releases apart from those the leader holds
// pending: counts that differ mean one server's ledger went back in
// time (its store restored from an older backup).
type LedgerCheck struct {
	Dataset string
	Charged uint64
	Pending []payload.ReleaseID
}

// ManifestField is the digest of one named part of a manifest.
type ManifestField struct {
	Name   string
	Digest [32]byte
}

func (*Error) Kind() Kind          { return KindError }
func (*Ack) Kind() Kind            { return KindAck }
func (*Upload) Kind() Kind         { return KindUpload }
func (*Prepare) Kind() Kind        { return KindPrepare }
func (*Prepared) Kind() Kind       { return KindPrepared }
func (*Decide) Kind() Kind         { return KindDecide }
func (*CreateRelease) Kind() Kind  { return KindCreateRelease }
func (*ReleaseCreated) Kind() Kind { return KindReleaseCreated }
func (*Query) Kind() Kind          { return KindQuery }
func (*Answer) Kind() Kind         { return KindAnswer }
func (*ManifestDigest) Kind() Kind { return KindManifestDigest }
func (*LedgerCheck) Kind() Kind    { return KindLedgerCheck }

// Encode returns the binary form of m: Version, Kind, then its fields.
func Encode(m Message) []byte {
	var w wire.Writer
	w.Uint8(Version)
	w.Uint8(uint8(m.Kind()))
	m.encode(&w)
	return w.Bytes()
}

// Decode parses one message, checking the version, every length cap and
// the well-formedness of components, prefixes and IDs. Its errors match
// ErrMalformed.
func Decode(b []byte) (Message, error) {
	m, err := decode(b)
	if err != nil {
		return nil, Malformed(fmt.Errorf("protocol: %w", err))
	}
	return m, nil
}

func decode(b []byte) (Message, error) {
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("message of %d bytes exceeds the limit %d", len(b), MaxMessageSize)
	}
	r := wire.NewReader(b)
	if v := r.Uint8("version"); r.Err() == nil && v != Version {
		return nil, fmt.Errorf("protocol version %d is not supported (want %d): the peer runs another fedecdf release; run one release at every party and server", v, Version)
	}
	kind := Kind(r.Uint8("kind"))
	if err := r.Err(); err != nil {
		return nil, err
	}
	m := newMessage(kind)
	if m == nil {
		return nil, fmt.Errorf("unknown message kind %d", kind)
	}
	m.decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("%T: %w", m, err)
	}
	return m, nil
}

func newMessage(k Kind) Message {
	switch k {
	case KindError:
		return new(Error)
	case KindAck:
		return new(Ack)
	case KindUpload:
		return new(Upload)
	case KindPrepare:
		return new(Prepare)
	case KindPrepared:
		return new(Prepared)
	case KindDecide:
		return new(Decide)
	case KindCreateRelease:
		return new(CreateRelease)
	case KindReleaseCreated:
		return new(ReleaseCreated)
	case KindQuery:
		return new(Query)
	case KindAnswer:
		return new(Answer)
	case KindManifestDigest:
		return new(ManifestDigest)
	case KindLedgerCheck:
		return new(LedgerCheck)
	case KindStatusRequest:
		return new(StatusRequest)
	case KindStatus:
		return new(Status)
	}
	return nil
}

// Call sends req to peer to and returns its response decoded as a T; an
// Error response becomes a *RemoteError.
func Call[T Message](ctx context.Context, c transport.Conn, to transport.PeerID, req Message) (T, error) {
	var zero T
	b, err := c.Call(ctx, to, Encode(req))
	if err != nil {
		return zero, err
	}
	resp, err := decode(b)
	if err != nil {
		return zero, fmt.Errorf("protocol: malformed response from %s: %w", to, Malformed(err))
	}
	if e, ok := resp.(*Error); ok {
		return zero, e.Remote(to)
	}
	t, ok := resp.(T)
	if !ok {
		return zero, fmt.Errorf("protocol: unexpected %T response from %s", resp, to)
	}
	return t, nil
}

func (m *Ack) encode(w *wire.Writer) { writeBool(w, m.Duplicate) }
func (m *Ack) decode(r *wire.Reader) { m.Duplicate = readBool(r, "duplicate") }

func (m *Upload) encode(w *wire.Writer) {
	w.String(m.Dataset)
	w.Fixed(m.Report[:])
	w.Blob(m.Key)
	w.Blob(m.Public)
	w.Blob(m.Share)
}

func (m *Upload) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	r.Fixed("report ID", m.Report[:])
	m.Key = r.Blob("key", MaxKeySize)
	m.Public = r.Blob("public share", MaxKeySize)
	m.Share = r.Blob("input share", MaxShareSize)
	if len(m.Key) != 0 && len(m.Public)+len(m.Share) != 0 {
		failf(r, "upload: a DCF key and a verified report at once")
	}
}

func (m *Prepare) encode(w *wire.Writer) {
	w.String(m.Dataset)
	writeItems(w, m.Items)
}

func (m *Prepare) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	m.Items = readItems(r, true)
}

func (m *Prepared) encode(w *wire.Writer) { writeItems(w, m.Items) }
func (m *Prepared) decode(r *wire.Reader) { m.Items = readItems(r, true) }

func (m *Decide) encode(w *wire.Writer) {
	w.String(m.Dataset)
	writeItems(w, m.Items)
}

func (m *Decide) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	m.Items = readItems(r, false)
}

func writeItems(w *wire.Writer, items []Item) {
	w.Uint32(uint32(len(items)))
	for _, it := range items {
		w.Fixed(it.Report[:])
		w.Uint8(uint8(it.Verdict))
		w.Blob(it.Message)
	}
}

// readItems reads at most MaxBatch items with known verdicts and no
// report twice: in Prepare and Prepared (withMessages) each with a
// message exactly when its verdict is VerdictOK; in Decide a message
// only with VerdictOK.
func readItems(r *wire.Reader, withMessages bool) []Item {
	n := r.Uint32("items")
	if n > MaxBatch {
		failf(r, "items: %d exceed the limit %d", n, MaxBatch)
		return nil
	}
	items := make([]Item, 0, min(n, 1024))
	seen := make(map[payload.ReportID]bool, min(n, 1024))
	for range n {
		var it Item
		r.Fixed("report ID", it.Report[:])
		it.Verdict = Verdict(r.Uint8("verdict"))
		it.Message = r.Blob("verifier message", MaxKeySize)
		if r.Err() != nil {
			return nil
		}
		switch {
		case it.Verdict >= numVerdicts:
			failf(r, "items: report %v: unknown verdict %d", it.Report, it.Verdict)
		case withMessages && (it.Verdict == VerdictOK) != (len(it.Message) != 0):
			failf(r, "items: report %v: verdict %d with a %d-byte message", it.Report, it.Verdict, len(it.Message))
		case !withMessages && it.Verdict != VerdictOK && len(it.Message) != 0:
			failf(r, "items: report %v: a message with a rejection in a decision", it.Report)
		case seen[it.Report]:
			failf(r, "items: report %v twice", it.Report)
		}
		if r.Err() != nil {
			return nil
		}
		seen[it.Report] = true
		items = append(items, it)
	}
	return items
}

func (m *CreateRelease) encode(w *wire.Writer) {
	w.String(m.Dataset)
	w.Fixed(m.Release[:])
	writeParams(w, m.Mechanism)
	writeComponents(w, m.Components)
	w.Uint32(uint32(m.Reports))
	w.Fixed(m.Digest[:])
	writeIDs(w, m.IDs)
}

func (m *CreateRelease) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	r.Fixed("release ID", m.Release[:])
	m.Mechanism = readParams(r)
	m.Components = readComponents(r)
	m.Reports = int(r.Uint32("reports"))
	r.Fixed("digest", m.Digest[:])
	m.IDs = readIDs(r, "report IDs")
}

func (m *ReleaseCreated) encode(w *wire.Writer) {
	w.Uint32(uint32(m.Reports))
	writeBool(w, m.NeedIDs)
	writeIDs(w, m.Missing)
}

func (m *ReleaseCreated) decode(r *wire.Reader) {
	m.Reports = int(r.Uint32("reports"))
	m.NeedIDs = readBool(r, "need IDs")
	m.Missing = readIDs(r, "missing report IDs")
}

func (m *Query) encode(w *wire.Writer) {
	w.String(m.Dataset)
	w.Fixed(m.Release[:])
	w.Uint8(uint8(m.Component))
	writePrefixes(w, m.Prefixes)
}

func (m *Query) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	r.Fixed("release ID", m.Release[:])
	m.Component = readComponent(r)
	m.Prefixes = readPrefixes(r)
}

func (m *Answer) encode(w *wire.Writer) {
	w.Uint32(uint32(m.Reports))
	w.Uint64s(m.Values)
	w.Blob(m.Field)
	writeParams(w, m.Mechanism)
}

func (m *Answer) decode(r *wire.Reader) {
	m.Reports = int(r.Uint32("reports"))
	m.Values = r.Uint64s("values", MaxPrefixes)
	m.Field = r.Blob("field values", FieldSize*MaxPrefixes)
	if len(m.Field)%FieldSize != 0 {
		failf(r, "field values: %d bytes is not a whole number of %d-byte elements", len(m.Field), FieldSize)
	}
	m.Mechanism = readParams(r)
}

func (m *ManifestDigest) encode(w *wire.Writer) {
	w.Uint32(uint32(len(m.Fields)))
	for _, f := range m.Fields {
		w.String(f.Name)
		w.Fixed(f.Digest[:])
	}
}

// decode reads at most MaxFields fields, with distinct names of at most
// MaxNameLen bytes.
func (m *ManifestDigest) decode(r *wire.Reader) {
	n := r.Uint32("fields")
	if n > MaxFields {
		failf(r, "fields: %d exceed the limit %d", n, MaxFields)
		return
	}
	seen := make(map[string]bool, n)
	for range n {
		var f ManifestField
		f.Name = r.String("field name", MaxNameLen)
		r.Fixed("field digest", f.Digest[:])
		if r.Err() != nil {
			return
		}
		if seen[f.Name] {
			failf(r, "fields: %q twice", f.Name)
			return
		}
		seen[f.Name] = true
		m.Fields = append(m.Fields, f)
	}
}

func (m *LedgerCheck) encode(w *wire.Writer) {
	w.String(m.Dataset)
	w.Uint64(m.Charged)
	writeIDs(w, m.Pending)
}

func (m *LedgerCheck) decode(r *wire.Reader) {
	m.Dataset = r.String("dataset", MaxNameLen)
	m.Charged = r.Uint64("charged releases")
	m.Pending = readIDs(r, "pending release IDs")
}

// failf records a semantic decoding error unless one is already recorded.
func failf(r *wire.Reader, format string, args ...any) {
	if r.Err() == nil {
		r.Fail(fmt.Errorf(format, args...))
	}
}

func writeBool(w *wire.Writer, b bool) {
	if b {
		w.Uint8(1)
	} else {
		w.Uint8(0)
	}
}

func readBool(r *wire.Reader, field string) bool {
	switch v := r.Uint8(field); v {
	case 0:
		return false
	case 1:
		return true
	default:
		failf(r, "%s: byte %d is not a boolean", field, v)
		return false
	}
}

func readComponent(r *wire.Reader) payload.Component {
	c := payload.Component(r.Uint8("component"))
	if !c.Valid() {
		failf(r, "component: unknown component %d", uint8(c))
	}
	return c
}

func writeComponents(w *wire.Writer, components []payload.Component) {
	b := make([]byte, len(components))
	for i, c := range components {
		b[i] = byte(c)
	}
	w.Blob(b)
}

// readComponents reads a strictly increasing, non-empty list of
// components.
func readComponents(r *wire.Reader) []payload.Component {
	b := r.Blob("components", payload.NumComponents)
	if len(b) == 0 {
		failf(r, "components: a release covers at least one component")
	}
	var components []payload.Component
	for i, x := range b {
		c := payload.Component(x)
		if !c.Valid() {
			failf(r, "components: unknown component %d", x)
		} else if i > 0 && c <= components[i-1] {
			failf(r, "components: not strictly increasing at %v", c)
		}
		components = append(components, c)
	}
	return components
}

func writePrefixes(w *wire.Writer, prefixes []int) {
	v := make([]uint64, len(prefixes))
	for i, p := range prefixes {
		v[i] = uint64(p)
	}
	w.Uint64s(v)
}

// readPrefixes reads a strictly increasing list of prefixes ≥ 1.
func readPrefixes(r *wire.Reader) []int {
	v := r.Uint64s("prefixes", MaxPrefixes)
	p := make([]int, len(v))
	for i, x := range v {
		if x < 1 || x > MaxBins {
			failf(r, "prefixes: prefix %d is not in [1, 2^40]", x)
			return nil
		}
		if i > 0 && x <= v[i-1] {
			failf(r, "prefixes: not strictly increasing at position %d (%d after %d)", i+1, x, v[i-1])
			return nil
		}
		p[i] = int(x)
	}
	return p
}

func writeParams(w *wire.Writer, p mechanism.Params) {
	w.String(p.Name)
	w.Uint64(uint64(p.Bins))
	w.Float64(p.Epsilon)
	w.Float64(p.Delta)
	w.Uint32(uint32(p.K))
	w.Uint8(uint8(p.Relation))
}

func readParams(r *wire.Reader) mechanism.Params {
	var p mechanism.Params
	p.Name = r.String("mechanism name", MaxNameLen)
	bins := r.Uint64("bins")
	if bins < 1 || bins > MaxBins {
		failf(r, "bins: %d is not in [1, 2^40]", bins)
	}
	p.Bins = int(bins)
	p.Epsilon = r.Float64("epsilon")
	if math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Epsilon <= 0 {
		failf(r, "epsilon: %v is not positive and finite", p.Epsilon)
	}
	p.Delta = r.Float64("delta")
	if !(p.Delta >= 0 && p.Delta < 1) {
		failf(r, "delta: %v is not in [0, 1)", p.Delta)
	}
	p.K = int(r.Uint32("k"))
	p.Relation = mechanism.Relation(r.Uint8("relation"))
	if p.Relation != mechanism.ReplaceOne && p.Relation != mechanism.AddRemove {
		failf(r, "relation: unknown neighbouring relation %d", p.Relation)
	}
	return p
}

func writeIDs(w *wire.Writer, ids []payload.ReportID) {
	b := make([]byte, 0, 16*len(ids))
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	w.Blob(b)
}

func readIDs(r *wire.Reader, field string) []payload.ReportID {
	b := r.Blob(field, 16*MaxReports)
	if len(b)%16 != 0 {
		failf(r, "%s: %d bytes is not a whole number of 16-byte IDs", field, len(b))
		return nil
	}
	ids := make([]payload.ReportID, len(b)/16)
	for i := range ids {
		copy(ids[i][:], b[16*i:])
	}
	return ids
}
