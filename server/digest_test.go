package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// TestReplayedUploadCheckedAgainstWhatWasAccepted is the store edited by
// someone who fixes up its checksums: a restarted server handed, for a
// report it accepted (finally, or as the helper tentatively), an upload
// other than the one it accepted refuses it, naming the report, before
// computing on it — ahead of the replay (PrepareReplay, ErrUploadChanged)
// and in the replay itself; the unedited store replays cleanly (the
// control), so the refusal is the digest's doing.
func TestReplayedUploadCheckedAgainstWhatWasAccepted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend Backend
		stage   byte
	}{
		{"dcf final", DCF, stageFinal}, {"additive final", Additive, stageFinal},
		{"dcf tentative", DCF, stageTentative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartable(t, tc.backend)
			r.uploadVerified(t, 0.1, 0.5, 0.9)
			if tc.stage == stageTentative {
				r.net.SetFaults(cutDecide)
			}
			_ = r.leader.Verify(context.Background())
			r.net.SetFaults(nil)
			st := r.store[Helper]
			if n := countStage(t, st, tc.stage); n != 3 {
				t.Fatalf("%d of the helper's records of stage %d, want 3", n, tc.stage)
			}
			srv, err := New(r.config(Helper))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.PrepareReplay("d", st.uploads); err != nil {
				t.Fatalf("the unedited store: %v", err)
			}
			up := mustDecode(st.uploads[1]).(*protocol.Upload)
			up.Share[len(up.Share)/2] ^= 0x10
			edited := append([][]byte{}, st.uploads...)
			edited[1] = protocol.Encode(up)
			srv, err = New(r.config(Helper))
			if err != nil {
				t.Fatal(err)
			}
			_, err = srv.PrepareReplay("d", edited)
			if !errors.Is(err, ErrUploadChanged) || !strings.Contains(err.Error(), up.Report.String()) {
				t.Fatalf("replaying an edited upload ahead: %v, want ErrUploadChanged naming report %v", err, up.Report)
			}
			resp := mustDecode(srv.Handle(context.Background(), "store", edited[1]))
			if e, ok := resp.(*protocol.Error); !ok || !strings.Contains(e.Text, ErrUploadChanged.Error()) || !strings.Contains(e.Text, up.Report.String()) {
				t.Fatalf("replaying an edited upload: %+v, want a refusal naming ErrUploadChanged and the report", resp)
			}
		})
	}
}

// cutDecide loses every Decide, so that the helper keeps its tentative
// verdicts.
func cutDecide(_, _ transport.PeerID, req []byte) transport.Fault {
	if len(req) > 1 && protocol.Kind(req[1]) == protocol.KindDecide {
		return transport.LoseRequest
	}
	return transport.Deliver
}

// countStage counts the verdict records of stage in st.
func countStage(t *testing.T, st *durable, stage byte) int {
	t.Helper()
	n := 0
	for _, b := range st.verdicts["d"] {
		rec, err := parseVerdictRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if rec.stage == stage {
			n++
		}
	}
	return n
}
