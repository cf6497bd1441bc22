package transport

import (
	"context"
	"errors"
	"testing"
)

func TestNetworkCountsTraffic(t *testing.T) {
	n := NewNetwork()
	n.Register("server", func(_ context.Context, from PeerID, req []byte) []byte {
		req[0] = 'X' // the caller's buffer must not change
		return []byte(string(from) + "!")
	})
	req := []byte("hello")
	resp, err := n.Conn("alice").Call(context.Background(), "server", req)
	if err != nil || string(resp) != "alice!" || string(req) != "hello" {
		t.Fatalf("response %q, request %q, error %v", resp, req, err)
	}
	if s := n.Stats("alice"); s != (Stats{BytesSent: 5, BytesReceived: 6, Calls: 1}) {
		t.Errorf("alice: %+v", s)
	}
	if s := n.Stats("server"); s != (Stats{BytesSent: 6, BytesReceived: 5}) {
		t.Errorf("server: %+v", s)
	}
	if _, err := n.Conn("alice").Call(context.Background(), "nobody", nil); err == nil {
		t.Error("call to an unknown peer succeeded")
	}
}

// TestFaults: a lost request never reaches the peer, a lost response
// does (the peer acts on it), and both fail the call with ErrLinkCut.
func TestFaults(t *testing.T) {
	for _, c := range []struct {
		name      string
		fault     Fault
		delivered bool
		err       bool
	}{{"deliver", Deliver, true, false}, {"lose request", LoseRequest, false, true}, {"lose response", LoseResponse, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			n := NewNetwork()
			got := 0
			n.Register("server", func(context.Context, PeerID, []byte) []byte { got++; return []byte("ok") })
			n.SetFaults(func(from, to PeerID, req []byte) Fault {
				if from != "alice" || to != "server" || string(req) != "hi" {
					t.Errorf("fault asked about %s → %s %q", from, to, req)
				}
				return c.fault
			})
			_, err := n.Conn("alice").Call(context.Background(), "server", []byte("hi"))
			if (got == 1) != c.delivered || (err != nil) != c.err || (err != nil && !errors.Is(err, ErrLinkCut)) {
				t.Errorf("delivered %d times, error %v", got, err)
			}
		})
	}
}
