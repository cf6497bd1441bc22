package transport

import (
	"context"
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
