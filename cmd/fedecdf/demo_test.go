package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedecdf/fedecdf/internal/verify"
)

// fedecdf demo end to end: two server processes (this test binary acting
// as fedecdf, see TestMain), 120 party hosts, one malicious party per
// kind of forgery and an analyst on 127.0.0.1 print the rejections per
// reason at both servers, the ECDF over the 120 honest reports, the ROC
// AUC and the Hosmer–Lemeshow test, and stop, without the servers' INFO
// logs or a progress bar (not a terminal).
func TestDemo(t *testing.T) {
	t.Setenv(asCommand, "1") // the server processes inherit it
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	o := demoOptions{parties: 120, bins: 32, epsilon: 1, upload: "direct", backend: "additive", malicious: len(verify.Forgeries()), transport: transportSealed}
	if err := runDemo(ctx, cmd, t.TempDir(), o); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	// Not a terminal and not --verbose: no server INFO log, no progress.
	for _, quiet := range []string{"INFO", "serving", "uploading"} {
		if strings.Contains(errOut.String()+out.String(), quiet) {
			t.Errorf("demo printed %q without --verbose on a non-terminal:\n%s", quiet, errOut.String())
		}
	}
	rejected := map[string]int{}
	for _, k := range verify.Forgeries() {
		rejected[verify.Reason(k.Want)]++
	}
	for _, want := range []string{"120 parties uploaded", "(sealed transport)", "7 malicious parties uploaded an invalid report each",
		"rejected by the leader: " + verify.RejectedText(rejected), "rejected by the helper: " + verify.RejectedText(rejected),
		"n = 120 verified reports", "quantile 0.5", "private AUC", "(true 0.", "on the same grid)", "Hosmer–Lemeshow from the same release", "true H ", "total ε spent: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDemoCancelledCleansUp: a demo whose context ends (as on SIGINT or
// SIGTERM) before its servers run returns, leaving no temporary
// directory (private keys, stores) behind.
func TestDemoCancelledCleansUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	cmd := newDemoCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--parties", "10"})
	if err := cmd.ExecuteContext(ctx); err == nil {
		t.Fatalf("a cancelled demo succeeded:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "demo in "+tmp) {
		t.Fatalf("the demo did not get as far as its directory in %s:\n%s", tmp, out.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("a cancelled demo left %v in %s", left, tmp)
	}
}

// TestStopChildren: stopChildren ends every running child (SIGTERM) and
// reaps it, and skips those never started or already reaped.
func TestStopChildren(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	running := demoChild(context.Background(), sleep, "600")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := demoChild(context.Background(), sleep, "0")
	if err := reaped.Run(); err != nil {
		t.Fatal(err)
	}
	never := demoChild(context.Background(), sleep, "600")
	stopChildren([]*exec.Cmd{running, reaped, never})
	if running.ProcessState == nil || running.ProcessState.Success() {
		t.Fatalf("the running child was not stopped: %v", running.ProcessState)
	}
}
