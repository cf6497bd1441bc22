package analyst

import (
	"context"
	"errors"
	"testing"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/server"
)

// fakeConn answers every call with resp and counts the calls.
type fakeConn struct {
	resp  []byte
	calls int
}

func (c *fakeConn) Self() transport.PeerID { return "analyst" }

func (c *fakeConn) Call(context.Context, transport.PeerID, []byte) ([]byte, error) {
	c.calls++
	return c.resp, nil
}

// TestFailoverFollowsOnlyStandbyRefusals: the analyst's client resends a
// request to the coordinator, once, exactly when the first process
// refused it with protocol.ErrStandby's code; another refusal, one whose
// text merely quotes ErrStandby's, and an answer are returned as they
// are; the caller sees the coordinator's answer.
func TestFailoverFollowsOnlyStandbyRefusals(t *testing.T) {
	answer := protocol.Encode(&protocol.Ack{Duplicate: true})
	for _, tc := range []struct {
		name     string
		first    []byte
		redirect bool
	}{
		{"standby refusal", protocol.Encode(protocol.Refusalf("leader: query refused: %w; ask the coordinating process at /ip4/10.0.0.1/tcp/4001", protocol.ErrStandby)), true},
		{"other refusal", protocol.Encode(protocol.Refusalf("leader: %w", server.ErrUnknownRelease)), false},
		{"text only", protocol.Encode(protocol.Refusalf("leader: %s", protocol.ErrStandby.Error())), false},
		{"answer", answer, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, coord := &fakeConn{resp: tc.first}, &fakeConn{resp: answer}
			f := &failover{first: first, coordinator: coord}
			resp, err := protocol.Call[*protocol.Ack](context.Background(), f, "leader", &protocol.Query{})
			wantCoord := 0
			if tc.redirect {
				wantCoord = 1
			}
			if first.calls != 1 || coord.calls != wantCoord || f.redirected != wantCoord {
				t.Fatalf("first called %d times, coordinator %d (redirected %d); want 1, %d", first.calls, coord.calls, f.redirected, wantCoord)
			}
			switch {
			case tc.redirect || tc.name == "answer":
				if err != nil || !resp.Duplicate {
					t.Errorf("got %+v, %v; want the answer", resp, err)
				}
			case errors.Is(err, protocol.ErrStandby) || err == nil:
				t.Errorf("got %v; want the first process's refusal, not matching ErrStandby", err)
			}
		})
	}
}
