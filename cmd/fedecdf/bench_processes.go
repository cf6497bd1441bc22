package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
)

// startStandbys starts processes−1 more server processes per role on
// the roles' stores, each with a libp2p and a sealed-upload address of
// its own, after d.start started the coordinating ones, and sets
// d.spread: the manifest for each process k of both roles (k = 1, the
// deployment's). Nothing with processes ≤ 1.
func (d *localDeployment) startStandbys(ctx context.Context, stderr io.Writer, exe string, processes int, args func(role string) []string) error {
	if processes <= 1 {
		return nil
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	d.spread = []*manifest.Manifest{d.m}
	for k := 2; k <= processes; k++ {
		m := *d.m
		for _, role := range []string{"helper", "leader"} {
			name := fmt.Sprintf("%s%d", role, k)
			port, err := freeLoopbackPort()
			if err != nil {
				return err
			}
			upload, err := freeLoopbackPort()
			if err != nil {
				return err
			}
			addr := fmt.Sprintf("127.0.0.1:%d", upload)
			p := demoChild(ctx, exe, append(append([]string{"server", "--role", role, "--key", filepath.Join(d.dir, role+".key"),
				"--manifest", filepath.Join(d.dir, "manifest.json"), "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port),
				"--upload-listen", addr, "--store", d.store(role)}, loopbackAdmission...), args(name)...)...)
			p.Stderr, p.Env = stderr, d.env
			if err := p.Start(); err != nil {
				return fmt.Errorf("starting the %s: %w", name, err)
			}
			d.procs[name] = p
			d.addStop(p)
			if err := waitListening(ctx, addr); err != nil {
				return fmt.Errorf("the %s: %w", name, err)
			}
			if role == "leader" {
				m.Leader.UploadAddr = addr
			} else {
				m.Helper.UploadAddr = addr
			}
		}
		d.spread = append(d.spread, &m)
	}
	return nil
}

// serverEnv is the environment of bench ingest's server processes with
// processes per role: this process's, with GOMAXPROCS set to the
// machine's cores over processes (at least 1) unless it is set already,
// so that K processes of a role run as many Go schedulers' worth of
// threads as one: each process's idle Ps spinning for work cost CPU per
// report that grows with K (EXPERIMENTS.md, "Several processes per
// role"). It returns the value the servers run with.
func serverEnv(processes int) (env []string, gomaxprocs string) {
	env = os.Environ()
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
		return env, v
	}
	gomaxprocs = strconv.Itoa(max(1, runtime.NumCPU()/max(1, processes)))
	return append(env, "GOMAXPROCS="+gomaxprocs), gomaxprocs
}
