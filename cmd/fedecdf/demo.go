package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/deploy"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/server"
)

func init() {
	var parties, bins int
	var epsilon float64
	var keep bool
	var upload string
	cmd := &cobra.Command{
		Use:   "demo [--parties 200]",
		Short: "Run two server processes, the parties and an analyst on 127.0.0.1, print the private ECDF, ROC AUC and Hosmer–Lemeshow test, and stop",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if parties < 1 {
				return fmt.Errorf("--parties %d is not positive", parties)
			}
			dir, err := os.MkdirTemp("", "fedecdf-demo")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			return runDemo(cmd.Context(), cmd, dir, parties, bins, epsilon, upload)
		},
	}
	f := cmd.Flags()
	f.IntVar(&parties, "parties", 200, "number of parties, each its own libp2p host")
	f.IntVar(&bins, "bins", 64, "number of bins N")
	f.Float64Var(&epsilon, "epsilon", 1, "ε of the release")
	f.StringVar(&upload, "upload", deploy.UploadDirect, "upload mode: direct or relay (through the leader, HPKE-sealed to the helper)")
	f.BoolVar(&keep, "keep", false, "keep the keys, manifest, stores and logs in the temporary directory")
	rootCmd.AddCommand(cmd)
}

func runDemo(ctx context.Context, cmd *cobra.Command, dir string, parties, bins int, epsilon float64, upload string) error {
	out := cmd.OutOrStdout()
	ids := map[string]*deploy.Identity{}
	for _, name := range []string{"leader", "helper", "analyst"} {
		id, err := deploy.NewIdentity()
		if err != nil {
			return err
		}
		if err := deploy.WriteIdentity(filepath.Join(dir, name+".key"), id); err != nil {
			return err
		}
		ids[name] = id
	}
	addrs := map[string]string{}
	for _, name := range []string{"leader", "helper"} {
		port, err := freeLoopbackPort()
		if err != nil {
			return err
		}
		addrs[name] = fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)
	}
	m := &deploy.Manifest{
		Version: deploy.ManifestVersion, Protocol: protocol.Version, Dataset: "demo", Backend: string(server.DCF), Upload: upload,
		Leader:     deploy.Endpoint{Public: ids["leader"].Public(), Addrs: []string{addrs["leader"]}},
		Helper:     deploy.Endpoint{Public: ids["helper"].Public(), Addrs: []string{addrs["helper"]}},
		Analysts:   []string{ids["analyst"].PeerID.String()},
		Grid:       deploy.Grid{Scale: "linear", Min: 0, Max: 1, Bins: bins},
		Payload:    deploy.PayloadLayout(),
		Mechanism:  deploy.Mech{Name: "auto", Epsilon: epsilon, Neighbours: "replace", Allowed: []string{"auto"}},
		Budget:     deploy.Budget{Epsilon: 2 * epsilon}, // the ECDF and the ROC release
		MinReports: parties,
	}
	manifest := filepath.Join(dir, "manifest.json")
	if err := m.Write(manifest); err != nil {
		return err
	}
	fmt.Fprintf(out, "demo in %s: leader %s, helper %s\n", dir, addrs["leader"], addrs["helper"])
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}()
	for _, role := range []string{"helper", "leader"} {
		p := exec.CommandContext(ctx, self, "server", "--role", role, "--key", filepath.Join(dir, role+".key"),
			"--manifest", manifest, "--listen", addrs[role], "--store", filepath.Join(dir, role+".db"))
		p.Stderr = os.Stderr
		if err := p.Start(); err != nil {
			return fmt.Errorf("starting the %s: %w", role, err)
		}
		procs = append(procs, p)
		if err := waitListening(ctx, addrs[role]); err != nil {
			return fmt.Errorf("the %s: %w", role, err)
		}
	}
	start := time.Now()
	n, err := deploy.SubmitAll(ctx, m, deploy.DemoInstances(parties, 1), p2p.Config{}, 16, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d parties uploaded in %.2f s (each its own libp2p host)\n", n, time.Since(start).Seconds())
	a, err := deploy.NewAnalyst(m, ids["analyst"], p2p.Config{})
	if err != nil {
		return err
	}
	defer a.Close()
	start = time.Now()
	e, err := a.ECDF(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "release and query of %d prefixes in %.2f s\n\n", bins, time.Since(start).Seconds())
	if err := e.Smooth("l2", []float64{0.1, 0.25, 0.5, 0.75, 0.9}); err != nil {
		return err
	}
	if err := writeECDFText(out, e); err != nil {
		return err
	}
	return demoROC(ctx, out, a)
}

// demoROC releases the ROC pair and prints its AUC and the Hosmer–Lemeshow
// test computed from the same release (the grid plan, no further ε).
func demoROC(ctx context.Context, out io.Writer, a *deploy.Analyst) error {
	r, err := a.ROC(ctx, "l2")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nROC release %s (label and 1−label, ε=%g): private AUC %.4f, average precision %.4f\n", r.Release, r.Epsilon, r.AUC, r.AveragePrecision)
	id, err := deploy.ParseReleaseID(r.Release)
	if err != nil {
		return err
	}
	h, err := a.HosmerRelease(ctx, id, "l2", 10)
	if err != nil {
		return err
	}
	if h.Error != "" {
		_, err = fmt.Fprintf(out, "Hosmer–Lemeshow from the same release (no further ε): undefined at this n and ε (%s)\n", h.Error)
		return err
	}
	_, err = fmt.Fprintf(out, "Hosmer–Lemeshow from the same release (no further ε): H = %.3g over %d groups\n", *h.Statistic, len(h.Groups))
	return err
}

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits (at most 30 s) until addr, a /ip4/…/tcp/… multiaddr
// on loopback, accepts TCP connections.
func waitListening(ctx context.Context, addr string) error {
	var port int
	if _, err := fmt.Sscanf(addr, "/ip4/127.0.0.1/tcp/%d", &port); err != nil {
		return fmt.Errorf("address %s: %w", addr, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 30 s: %w", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
