package p2p

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/network"
	ma "github.com/multiformats/go-multiaddr"
)

// openConns opens inbound connections from addr through rm until one is
// refused or n are open, and returns how many were accepted; it leaves
// them open.
func openConns(t *testing.T, rm network.ResourceManager, addr string, n int) int {
	t.Helper()
	a := ma.StringCast(addr)
	for k := 0; k < n; k++ {
		scope, err := rm.OpenConnection(network.DirInbound, true, a)
		if err != nil {
			return k
		}
		t.Cleanup(scope.Done)
	}
	return n
}

// TestLimitsPerAddress: the resource manager accepts ConnsPerAddr
// concurrent connections from one non-loopback address and the reserve
// (handshakeReserve: those handshakes just closed to make room), refuses
// the next (logging it), leaves other addresses and loopback alone, and
// rate-limits new connections to the burst.
func TestLimitsPerAddress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limits   Limits
		accepted int // concurrent connections accepted from one address
	}{
		{"ours", Limits{}.withDefaults(), min(DefaultConnsPerAddr+handshakeReserve, DefaultConnBurst)}, // the burst binds first
		{"small", Limits{ConnsPerAddr: 8, ConnRate: 0.2, ConnBurst: 100, Conns: 200}, 8 + handshakeReserve},
		{"rate-bound", Limits{ConnsPerAddr: 100, ConnRate: 0.001, ConnBurst: 5, Conns: 100}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			rm, err := newResourceManager(tc.limits, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer rm.Close()
			if got := openConns(t, rm, "/ip4/10.77.0.3/tcp/5000", tc.accepted+1); got != tc.accepted {
				t.Errorf("%d concurrent connections accepted from one address, want %d", got, tc.accepted)
			}
			if !strings.Contains(logs.String(), "refused a connection") || !strings.Contains(logs.String(), "10.77.0.3") {
				t.Errorf("the refusal was not logged with the address:\n%s", logs.String())
			}
			if got := openConns(t, rm, "/ip4/10.77.0.4/tcp/5000", 1); got != 1 {
				t.Error("another address was refused")
			}
			if got := openConns(t, rm, "/ip4/127.0.0.1/tcp/5000", tc.accepted+1); got != tc.accepted+1 {
				t.Errorf("loopback: %d of %d accepted; loopback is not limited per address", got, tc.accepted+1)
			}
		})
	}
}

func TestLimitsValidate(t *testing.T) {
	for _, tc := range []struct {
		l    Limits
		says string
	}{
		{Limits{ConnsPerAddr: -1}, "per address"},
		{Limits{ConnRate: -1}, "rate"},
		{Limits{ConnBurst: -1}, "burst"},
		{Limits{Conns: -1}, "connection limit"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			if err := tc.l.Validate(); err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Validate(%+v) = %v, want an error naming %q", tc.l, err, tc.says)
			}
			if _, err := New(Config{Key: newKey(t), Limits: tc.l, Logger: quiet}); err == nil {
				t.Errorf("New accepted %+v", tc.l)
			}
		})
	}
	if err := (Limits{}).Validate(); err != nil {
		t.Errorf("zero Limits (the defaults): %v", err)
	}
}
