package server

import (
	"fmt"

	"github.com/fedecdf/fedecdf/core"
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
const verdictRecordVersion = 2

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
// the stage and the protocol.Verdict, one byte each, then the message of
// an acceptance (none for a rejection).
func verdictRecord(stage byte, v protocol.Verdict, msg []byte) []byte {
	return append([]byte{verdictRecordVersion, stage, byte(v)}, msg...)
}

// parseVerdictRecord decodes a verdict record.
func parseVerdictRecord(b []byte) (stage byte, v protocol.Verdict, msg []byte, err error) {
	switch {
	case len(b) == 0:
		return 0, 0, nil, fmt.Errorf("empty verdict record")
	case b[0] != verdictRecordVersion:
		return 0, 0, nil, fmt.Errorf("verdict record version %d is not supported (want %d): the store was written by another fedecdf; start this one on a new store", b[0], verdictRecordVersion)
	case len(b) < 3:
		return 0, 0, nil, fmt.Errorf("verdict record of %d bytes, want at least 3", len(b))
	case b[1] != stageFinal && b[1] != stageTentative:
		return 0, 0, nil, fmt.Errorf("verdict record of unknown stage %d", b[1])
	case protocol.Verdict(b[2]) != protocol.VerdictOK && verdicts[protocol.Verdict(b[2])] == nil: // VerdictMissing too
		return 0, 0, nil, fmt.Errorf("verdict record of unknown verdict %d", b[2])
	case len(b) > 3 && protocol.Verdict(b[2]) != protocol.VerdictOK:
		return 0, 0, nil, fmt.Errorf("verdict record of a rejection with a %d-byte message: only an acceptance carries one", len(b)-3)
	}
	if len(b) > 3 {
		msg = b[3:]
	}
	return b[1], protocol.Verdict(b[2]), msg, nil
}

// noVerdicts is the VerdictStore of a server configured without one: it
// keeps nothing, since such a server starts with no verdicts to load
// (in process, where n may be 10^6, a kept verdict would only cost
// memory).
type noVerdicts struct{}

func (noVerdicts) SaveVerdicts(string, map[payload.ReportID][]byte) error { return nil }

func (noVerdicts) LoadVerdicts(string, func(payload.ReportID, []byte) error) error { return nil }

// save durably records verdicts of stage on the reports of items, each
// with its message (decision: an acceptance's only).
func (v *verified) save(stage byte, items []protocol.Item) error {
	if len(items) == 0 {
		return nil
	}
	records := make(map[payload.ReportID][]byte, len(items))
	for _, it := range items {
		records[it.Report] = verdictRecord(stage, it.Verdict, it.Message)
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
		stage, verdict, msg, err := parseVerdictRecord(b)
		if err != nil {
			return fmt.Errorf("report %v: %w", id, err)
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
