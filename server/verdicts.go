package server

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// VerdictStore keeps the verification verdicts of a server's verified
// reports (additive and verified DCF) (see the package doc, "Verification state across restarts"):
// records the server encodes, saved durably before the server acts on
// them and loaded by New. Package deploy hands it an internal/store.Store.
type VerdictStore interface {
	// SaveVerdicts durably records the verdict records of dataset, all
	// at once, each replacing any earlier record of its report.
	SaveVerdicts(dataset string, records map[core.ID][]byte) error
	// LoadVerdicts calls fn with every verdict record of dataset.
	LoadVerdicts(dataset string, fn func(id core.ID, record []byte) error) error
}

// verdictRecordVersion is the first byte of a stored verdict record.
// Changing the record is a breaking change: bump it, and old records are
// refused with a message saying so (TestVerdictRecordKnownAnswer).
// Version 3 adds the accepted upload's digest (uploadDigest) to every
// acceptance; version 2 records, which have none, are still read, their
// replayed uploads checked through the store's seal only.
const (
	verdictRecordVersion   = 3
	verdictRecordVersionV2 = 2
)

// ErrUploadChanged is wrapped by the error of a restarted server handed,
// for a report it accepted before, an upload other than the one it
// accepted: its digest, kept in the acceptance's verdict record, differs
// (a store edited, or damaged with its checksum intact; an upload
// replayed from the network under an accepted report's ID). The error
// names the report; package deploy refuses to start on it as damage
// (internal/store.ErrDamaged), and the operator can quarantine the
// report. A read-back of an accepted upload to sum it again (a release
// re-derived or folded again from its reports) is refused with it too,
// naming the dataset, the release and the report: so it also crosses the
// wire, to the analyst whose query meets it (its wire code,
// internal/errcode.UploadChanged).
var ErrUploadChanged = errcode.New(errcode.UploadChanged, "not the upload accepted")

// uploadDigest is the SHA-256 digest of an upload as a server accepted
// it: a domain-separation prefix, then the dataset, report ID, key,
// public share and share, each with its 4-byte big-endian length.
// Persisted in verdict records: changing it is a breaking change of the
// record (verdictRecordVersion).
func uploadDigest(up *protocol.Upload) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte("fedecdf upload digest v1"))
	var n [4]byte
	for _, b := range [][]byte{[]byte(up.Dataset), up.Report[:], up.Key, up.Public, up.Share} {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// A verdict record's stage: the final verdict, or the helper's tentative
// one (its answer to a Prepare, before the leader's Decide).
//
// An acceptance carries the message a restarted server needs to finish
// the exchange: in a final record at the leader, its message for the
// helper's settle in Decide (empty for the additive backend); in a
// tentative record at the helper, what its scheme keeps to answer the
// same again and settle (scheme.kept: for the verified DCF its own
// second message, never the leader's openings; for the additive backend
// the leader's message), from which it derives its answer and state
// again (retentative).
const (
	stageFinal     = 1
	stageTentative = 2
)

// verdictRecord encodes a verdict of stage on one report: the version,
// the stage and the protocol.Verdict, one byte each, then for an
// acceptance the digest of the upload accepted (uploadDigest, 32 bytes)
// and the message (a rejection has neither).
func verdictRecord(stage byte, v protocol.Verdict, digest [sha256.Size]byte, msg []byte) []byte {
	b := []byte{verdictRecordVersion, stage, byte(v)}
	if v != protocol.VerdictOK {
		return b
	}
	return append(append(b, digest[:]...), msg...)
}

// storedVerdict is a decoded verdict record; digested is false for a
// version 2 acceptance, which holds no digest.
type storedVerdict struct {
	stage    byte
	verdict  protocol.Verdict
	digest   [sha256.Size]byte
	digested bool
	msg      []byte
}

// parseVerdictRecord decodes a verdict record of version 3, or 2.
func parseVerdictRecord(b []byte) (storedVerdict, error) {
	var r storedVerdict
	switch {
	case len(b) == 0:
		return r, fmt.Errorf("empty verdict record")
	case b[0] != verdictRecordVersion && b[0] != verdictRecordVersionV2:
		return r, fmt.Errorf("verdict record version %d is not supported (want %d): the store was written by another fedecdf; start this one on a new store", b[0], verdictRecordVersion)
	case len(b) < 3:
		return r, fmt.Errorf("verdict record of %d bytes, want at least 3", len(b))
	case b[1] != stageFinal && b[1] != stageTentative:
		return r, fmt.Errorf("verdict record of unknown stage %d", b[1])
	case protocol.Verdict(b[2]) != protocol.VerdictOK && verdicts[protocol.Verdict(b[2])] == nil: // VerdictMissing too
		return r, fmt.Errorf("verdict record of unknown verdict %d", b[2])
	case len(b) > 3 && protocol.Verdict(b[2]) != protocol.VerdictOK:
		return r, fmt.Errorf("verdict record of a rejection with a %d-byte message: only an acceptance carries one", len(b)-3)
	}
	r.stage, r.verdict = b[1], protocol.Verdict(b[2])
	rest := b[3:]
	if r.verdict == protocol.VerdictOK && b[0] == verdictRecordVersion {
		if len(rest) < sha256.Size {
			return r, fmt.Errorf("verdict record of an acceptance of %d bytes, want at least %d (its upload's digest)", len(b), 3+sha256.Size)
		}
		r.digest, r.digested, rest = [sha256.Size]byte(rest[:sha256.Size]), true, rest[sha256.Size:]
	}
	if len(rest) > 0 {
		r.msg = rest
	}
	return r, nil
}

// heldDigest returns the digest of the upload held of report id; the
// caller holds the server's lock.
func (v *verified) heldDigest(id payload.ReportID) ([sha256.Size]byte, bool) {
	up, ok := v.uploads[id]
	if !ok {
		return [sha256.Size]byte{}, false
	}
	return uploadDigest(up), true
}

// tentativeDigest returns the digest of the upload of report id the
// helper answered for; the caller holds the server's lock.
func (v *verified) tentativeDigest(id payload.ReportID) ([sha256.Size]byte, bool) {
	t, ok := v.tentative[id]
	if !ok {
		return [sha256.Size]byte{}, false
	}
	return t.digest, true
}

// checkAccepted refuses the upload m of a report accepted (finally or
// tentatively) before a restart if it is not the upload accepted
// (ErrUploadChanged); a version 2 record keeps no digest to check.
func (v *verified) checkAccepted(m *protocol.Upload) error {
	want, ok := v.accepted[m.Report]
	if ok && uploadDigest(m) != want {
		return fmt.Errorf("report %v, accepted before a restart: %w: its upload's digest is not the one its verdict record keeps (the store was edited or damaged); quarantine the report at both servers", m.Report, ErrUploadChanged)
	}
	return nil
}

// noVerdicts is the VerdictStore of a server configured without one: it
// keeps nothing, since such a server starts with no verdicts to load
// (in process, where n may be 10^6, a kept verdict would only cost
// memory).
type noVerdicts struct{}

func (noVerdicts) SaveVerdicts(string, map[payload.ReportID][]byte) error { return nil }

func (noVerdicts) LoadVerdicts(string, func(payload.ReportID, []byte) error) error { return nil }

// save durably records verdicts of stage on the reports of items, each
// with its message (decision: an acceptance's only) and, for an
// acceptance, the digest of its upload (uploadDigest), which digestOf
// returns (an accepted report was prepared, so its upload is known).
func (v *verified) save(stage byte, items []protocol.Item, digestOf func(payload.ReportID) ([sha256.Size]byte, bool)) error {
	if len(items) == 0 {
		return nil
	}
	records := make(map[payload.ReportID][]byte, len(items))
	for _, it := range items {
		var digest [sha256.Size]byte
		if it.Verdict == protocol.VerdictOK {
			var ok bool
			if digest, ok = digestOf(it.Report); !ok {
				return fmt.Errorf("saving the acceptance of report %v: its upload is not known", it.Report)
			}
		}
		records[it.Report] = verdictRecord(stage, it.Verdict, digest, it.Message)
	}
	if err := v.store.SaveVerdicts(v.dataset, records); err != nil {
		return fmt.Errorf("saving %d verdicts: %w", len(items), err)
	}
	return nil
}

// load restores the stored verdicts of the dataset: final ones are
// decided again (a rejection counted at once, an acceptance once its
// upload is held again: restore), the helper's tentative ones restored
// with their upload; the leader tells the helper every final verdict
// again, with its message (the helper ignores those it has).
func (v *verified) load(role Role) error {
	return v.store.LoadVerdicts(v.dataset, func(id payload.ReportID, b []byte) error {
		rec, err := parseVerdictRecord(b)
		if err != nil {
			return fmt.Errorf("report %v: %w", id, err)
		}
		stage, verdict, msg := rec.stage, rec.verdict, rec.msg
		if rec.digested {
			v.accepted[id] = rec.digest
		}
		switch {
		case stage == stageTentative && role == Leader:
			return fmt.Errorf("report %v: the leader holds a helper's tentative verdict: is this the leader's store?", id)
		case stage == stageTentative:
			v.restoreTentative[id] = protocol.Item{Report: id, Verdict: verdict, Message: msg}
			return nil
		}
		if verdict == protocol.VerdictOK {
			v.restore[id] = true
		} else {
			v.refused[id] = verdict
			v.rejected[reasonOf(verdict)]++
		}
		if role == Leader {
			v.untold = append(v.untold, protocol.Item{Report: id, Verdict: verdict, Message: msg})
		}
		return nil
	})
}
