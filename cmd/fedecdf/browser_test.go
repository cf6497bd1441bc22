package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath returns the browser the UI tests drive: $FEDECDF_CHROMIUM
// when set (and then only it), else chromium on the PATH, else
// /usr/bin/chromium. Without one the test is skipped with a message,
// except under CI=true, where a skipped browser test would hide the UI's
// only end-to-end check: it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	candidates := []string{"chromium", "/usr/bin/chromium"}
	if p := os.Getenv("FEDECDF_CHROMIUM"); p != "" {
		candidates = []string{p}
	}
	for _, p := range candidates {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	msg := fmt.Sprintf("no chromium at %v (install it: apt-get install chromium, or set FEDECDF_CHROMIUM): the browser tests of fedecdf ui are skipped", candidates)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + ", which CI=true does not allow")
	}
	t.Skip(msg)
	return ""
}

// browser is a tab of a headless Chromium with a fresh profile.
type browser struct {
	ctx context.Context
}

// newBrowser starts Chromium, isolated from the network services it
// would otherwise call (updates, sync, QUIC probes); every action of the
// test must end within timeout: a guard against a hung browser, not a
// measurement.
func newBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout
		t.Fatalf("starting chromium: %v", err)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancel)
	return &browser{ctx: tctx}
}

// do runs actions, failing the test on an error.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to url and returns the HTTP status of the page.
func (b *browser) open(t *testing.T, url string) int64 {
	t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return resp.Status
}

// submit clicks the element of id, which submits a form, and returns
// the HTTP status of the page it leads to.
func (b *browser) submit(t *testing.T, id string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.ID(id)))
	if err != nil {
		t.Fatalf("submit #%s: %v", id, err)
	}
	return resp.Status
}

// text returns the visible text of the element of id, which must
// appear within 30 seconds (a guard, not a measurement).
func (b *browser) text(t *testing.T, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
	if err != nil {
		loc, _ := chromedp.Run(b.ctx, chromedp.Location())
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		t.Fatalf("text of #%s at %s: %v; the page says:\n%s", id, loc, err, body)
	}
	return strings.TrimSpace(s)
}

// eval evaluates a JavaScript expression in the page through the
// DevTools protocol (the pages themselves run no script).
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the whole page as name.png into dir and logs where.
func (b *browser) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// screenshotDir is where screenshots go: $FEDECDF_UI_SCREENSHOTS, or a
// temporary directory of t.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("FEDECDF_UI_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// startUI runs "fedecdf ui args…" in-process until the test ends and
// returns the address it serves, as it prints it.
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := newUICommand()
	pr, pw := io.Pipe()
	cmd.SetOut(pw)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("fedecdf ui %s: %v", strings.Join(args, " "), <-done)
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("fedecdf ui: %v", err)
		}
	})
	_, rest, _ := strings.Cut(line, "serving ")
	url, _, _ := strings.Cut(rest, " ")
	return strings.TrimSuffix(url, "/")
}
