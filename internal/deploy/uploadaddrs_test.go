package deploy

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
)

// countingProxy forwards every sealed frame it receives to the address
// to and its answer back, counting the frames: a stand-in for one of a
// server's processes.
type countingProxy struct {
	ln     net.Listener
	frames atomic.Int64
}

func startCountingProxy(t *testing.T, to string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				kind, body, err := sealed.ReadFrame(c, 1<<20, sealed.FrameUpload, sealed.FrameRelayed)
				if err != nil {
					return
				}
				p.frames.Add(1)
				if ak, ab, err := exchangeRaw(to, kind, body); err == nil {
					sealed.WriteFrame(c, ak, ab)
				}
			}()
		}
	}()
	return p
}

// deadAddr is a loopback address nobody listens on (connection refused).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// TestSealedUploadsSeveralAddresses: a party of a manifest listing
// several upload addresses for the leader (its processes) spreads its
// reports over them, and fails over to another when one refuses
// connections or leaves uploads unanswered; every report is stored
// once at each server and acknowledged as new (the frame resent to
// another address is the same report), in both upload modes.
func TestSealedUploadsSeveralAddresses(t *testing.T) {
	const n = 40
	for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
		for _, c := range []struct {
			name string
			// addrs returns the leader's addresses in front of the
			// two proxies a and b (which forward to the leader).
			addrs func(t *testing.T, a, b string) []string
			// spread: both proxies must carry a share of the reports
			spread bool
		}{
			{"two live processes", func(_ *testing.T, a, b string) []string { return []string{a, b} }, true},
			{"one process down", func(t *testing.T, a, _ string) []string { return []string{deadAddr(t), a} }, false},
			{"one process unanswering", func(t *testing.T, a, _ string) []string { return []string{stallingListener(t), a} }, false},
		} {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				d := newSealedDeployment(t, mode, time.Minute)
				a, b := startCountingProxy(t, d.m.Leader.UploadAddr), startCountingProxy(t, d.m.Leader.UploadAddr)
				view := *d.m
				addrs := c.addrs(t, a.ln.Addr().String(), b.ln.Addr().String())
				view.Leader.UploadAddr, view.Leader.MoreUploadAddrs = addrs[0], addrs[1:]
				if err := view.Check(); err != nil {
					t.Fatal(err)
				}
				tc := fast
				tc.CallTimeout = 300 * time.Millisecond
				p, err := client.NewParty(&view, nil, tc)
				if err != nil {
					t.Fatal(err)
				}
				for k, x := range instances(n, 27) {
					r, err := p.NewReport(x)
					if err != nil {
						t.Fatal(err)
					}
					if dup, err := p.Send(context.Background(), r); err != nil || dup {
						t.Fatalf("report %d: duplicate %v, %v; want stored anew", k, dup, err)
					}
				}
				if got := d.counts(); got != [2]int{n, n} {
					t.Errorf("stored %v reports, want %d at each server", got, n)
				}
				fa, fb := a.frames.Load(), b.frames.Load()
				// Report IDs are uniform: a share below n/8 of 40 at one
				// of two addresses has probability < 1e-5.
				if c.spread && (fa < n/8 || fb < n/8 || fa+fb != n) {
					t.Errorf("the two processes received %d and %d of %d reports, want each a share and every report once", fa, fb, n)
				}
				if !c.spread && fa != n {
					t.Errorf("the live process received %d frames, want all %d reports", fa, n)
				}
			})
		}
	}
}

// TestSealedAllAddressesDown: an upload to a server none of whose
// addresses listens fails with a *client.DialError and an error naming
// every address.
func TestSealedAllAddressesDown(t *testing.T) {
	d := newSealedDeployment(t, manifest.UploadDirect, time.Minute)
	view := *d.m
	view.Helper.UploadAddr, view.Helper.MoreUploadAddrs = deadAddr(t), []string{deadAddr(t)}
	p, err := client.NewParty(&view, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Submit(context.Background(), instances(1, 12)[0])
	var dial *client.DialError
	if !errors.As(err, &dial) || dial.Server != manifest.HelperName || !strings.Contains(err.Error(), strings.Join(view.Helper.UploadAddrs(), ", ")) {
		t.Fatalf("upload to a helper none of whose processes listens: %v, want a *client.DialError naming its addresses", err)
	}
}
