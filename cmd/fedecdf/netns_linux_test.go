package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
)

// partiesEnv makes TestManyPartiesOneAddress, run again by itself in the
// parties' network namespace, act as the parties of the manifest whose
// path the variable holds.
const partiesEnv = "FEDECDF_TEST_PARTIES"

// ipPath returns the path of the ip command, skipping the test without it.
func ipPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip command: cannot create network namespaces")
	}
	return path
}

// netnsPair creates two network namespaces of this test joined by a veth
// pair: the servers' (10.77.0.1/24) and the parties' (10.77.0.3/24),
// deleted when the test ends. Nothing outside them is touched. It skips
// the test when namespaces cannot be created (not root, no ip, no
// permission).
func netnsPair(t *testing.T) (servers, parties string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot create network namespaces")
	}
	ip := ipPath(t)
	id := os.Getpid() % 10000000
	servers, parties = fmt.Sprintf("fedecdf%d-srv", id), fmt.Sprintf("fedecdf%d-pty", id)
	run := func(args ...string) error {
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, ns := range []string{servers, parties} {
		if err := run("netns", "add", ns); err != nil {
			t.Skipf("cannot create a network namespace: %v", err)
		}
		t.Cleanup(func() {
			if err := run("netns", "del", ns); err != nil {
				t.Errorf("removing namespace %s: %v", ns, err)
			}
		})
	}
	vs, vp := fmt.Sprintf("fe%ds", id), fmt.Sprintf("fe%dp", id)
	for _, args := range [][]string{
		{"link", "add", vs, "netns", servers, "type", "veth", "peer", "name", vp, "netns", parties},
		{"-n", servers, "addr", "add", "10.77.0.1/24", "dev", vs},
		{"-n", parties, "addr", "add", "10.77.0.3/24", "dev", vp},
		{"-n", servers, "link", "set", vs, "up"},
		{"-n", parties, "link", "set", vp, "up"},
		{"-n", servers, "link", "set", "lo", "up"},
		{"-n", parties, "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	return servers, parties
}

// manyParties is how many parties upload from the one address, one
// after the other and then all at once.
const manyParties = 60

// TestManyPartiesOneAddress runs the two servers in a network namespace
// of their own (10.77.0.1) and 60 parties, each its own libp2p host
// making one attempt, from one non-loopback address (10.77.0.3), first
// one after the other, then all at once: with the server's default
// limits all are accepted; with go-libp2p's defaults (8 concurrent
// connections, 0.2 per second after a burst of 16, per address) most
// are refused, each party's error names a reset connection (not "dial
// backoff") and the server logs the refusals. A party dialling an
// address with no route from its namespace fails with p2p.ErrNoRoute.
func TestManyPartiesOneAddress(t *testing.T) {
	if manifest := os.Getenv(partiesEnv); manifest != "" {
		partiesChild(t, manifest)
		return
	}
	srvNS, partyNS := netnsPair(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		accepted bool // all accepted
	}{
		{"server defaults", nil, true},
		{"libp2p defaults", []string{"--conns-per-address", "8", "--conn-rate", "0.2", "--conn-burst", "16"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := newClusterWith(t, ctx, 1, clusterOptions{netns: srvNS, ip: "10.77.0.1", serverArgs: tc.args})
			child := exec.CommandContext(ctx, ipPath(t), "netns", "exec", partyNS, self, "-test.run=^TestManyPartiesOneAddress$", "-test.count=1")
			child.Env = append(os.Environ(), partiesEnv+"="+c.manifest)
			out, err := child.CombinedOutput()
			if err != nil {
				t.Fatalf("parties: %v\n%s", err, out)
			}
			for _, mode := range []string{"sequential", "concurrent"} {
				var n, ok, reset int
				var example string
				if !scanResult(string(out), mode, &n, &ok, &reset, &example) {
					t.Fatalf("no %s result in the parties' output:\n%s", mode, out)
				}
				t.Logf("%s: %d of %d parties accepted from 10.77.0.3 (%d refused with a reset connection)%s", mode, ok, n, reset, example)
				switch {
				case tc.accepted && ok != n:
					t.Errorf("%s: %d of %d parties accepted, want all", mode, ok, n)
				case !tc.accepted && ok == n:
					t.Errorf("%s: all %d parties accepted under go-libp2p's limits: the test does not reach the limits", mode, n)
				case reset != n-ok:
					t.Errorf("%s: %d parties failed, %d of them naming a reset connection; want all:%s", mode, n-ok, reset, example)
				}
			}
			if _, line, found := strings.Cut(string(out), "parties unreachable: "); found {
				line, _, _ = strings.Cut(line, "\n")
				t.Logf("unreachable leader: %s", line)
			}
			if !strings.Contains(string(out), "parties unreachable: true | ") {
				t.Errorf("a party dialling an address without a route does not fail with p2p.ErrNoRoute:\n%s", out)
			}
			if strings.Contains(string(out), "backoff") {
				t.Errorf("a party's error says backoff:\n%s", out)
			}
			if !tc.accepted && !strings.Contains(c.logs["leader"].String(), "refused a connection") {
				t.Errorf("the leader did not log its refusals:\n%s", c.logs["leader"])
			}
			c.kill("leader")
			c.kill("helper")
		})
	}
}

// scanResult reads the parties' result line of mode.
func scanResult(out, mode string, n, ok, reset *int, example *string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, found := strings.CutPrefix(line, "parties "+mode+": ")
		if !found {
			continue
		}
		head, ex, _ := strings.Cut(rest, " | ")
		if _, err := fmt.Sscanf(head, "%d %d %d", n, ok, reset); err != nil {
			return false
		}
		if ex != "" {
			*example = "; e.g. " + ex
		}
		return true
	}
	return false
}

// partiesChild uploads manyParties reports, each from a new host with a
// single attempt, one after the other and then all at once, and prints
// "parties MODE: N ACCEPTED RESET | an error" for each mode.
func partiesChild(t *testing.T, manifestPath string) {
	m, err := manifest.ReadManifest(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	tc := p2p.Config{Logger: crashTransport.Logger, Attempts: 1, CallTimeout: 30 * time.Second}
	inst := client.DemoInstances(manyParties, 3)
	upload := func(k int) error {
		p, err := client.NewParty(m, nil, tc)
		if err != nil {
			return err
		}
		defer p.Close()
		_, err = p.Submit(context.Background(), inst[k])
		return err
	}
	errs := make([]error, manyParties)
	for k := range errs {
		errs[k] = upload(k)
	}
	report("sequential", errs)
	var wg sync.WaitGroup
	for k := range errs {
		wg.Go(func() { errs[k] = upload(k) })
	}
	wg.Wait()
	report("concurrent", errs)
	// A leader address with no route from the parties' namespace (it has
	// no default route: the dial fails there, at once).
	m.Leader.Addrs = []string{"/ip4/10.78.0.1/tcp/4001"}
	err = upload(0)
	fmt.Printf("parties unreachable: %v | %v\n", errors.Is(err, p2p.ErrNoRoute), err)
}

func report(mode string, errs []error) {
	ok, reset, example := 0, 0, ""
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, p2p.ErrConnReset):
			reset++
			fallthrough
		default:
			example = strings.ReplaceAll(err.Error(), "\n", " ")
		}
	}
	fmt.Printf("parties %s: %d %d %d | %s\n", mode, len(errs), ok, reset, example)
}
