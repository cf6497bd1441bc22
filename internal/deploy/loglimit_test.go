package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestConnLogLimitsPerAddress: one address's flood of connection
// warnings is cut to connLogBurst lines per window, then one line per
// window says how many more were suppressed; another address's
// warnings are logged all the same, and a new window starts afresh.
func TestConnLogLimitsPerAddress(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s := &Server{log: log}
	for i := range 1000 {
		s.connWarn("10.0.0.1/32", "sealed upload dropped", "n", i)
	}
	s.connWarn("10.0.0.2/32", "sealed upload dropped", "n", -1)
	s.connLog.flush(log)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != connLogBurst+2 {
		t.Fatalf("%d lines for 1001 warnings, want %d:\n%s", len(lines), connLogBurst+2, buf.String())
	}
	last := lines[len(lines)-1]
	for _, w := range []string{"more connection warnings suppressed", "from=10.0.0.1/32", fmt.Sprintf("suppressed=%d", 1000-connLogBurst)} {
		if !strings.Contains(last, w) {
			t.Errorf("the summary %q lacks %q", last, w)
		}
	}
	if !strings.Contains(buf.String(), "n=-1") {
		t.Error("the other address's warning was suppressed")
	}
	buf.Reset()
	s.connWarn("10.0.0.1/32", "sealed upload dropped")
	s.connLog.flush(log)
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("a new window logged %d lines for one warning, want 1:\n%s", n, buf.String())
	}
}

// TestConnLogBoundsAddresses: past connLogAddrs addresses, the others
// are counted together, so many addresses cannot grow the state.
func TestConnLogBoundsAddresses(t *testing.T) {
	var l connLog
	for i := range connLogAddrs + 500 {
		for range connLogBurst + 1 {
			l.allow(fmt.Sprintf("10.%d.%d.1/32", i/256, i%256), "x")
		}
	}
	if n := len(l.addrs); n != connLogAddrs+1 {
		t.Fatalf("%d addresses kept, want %d and one for the others", n, connLogAddrs+1)
	}
}

// TestLastErrorsKeepDistinctCauses: a flood of one warning keeps its
// most recent line only, and the earlier, other causes stay in view.
func TestLastErrorsKeepDistinctCauses(t *testing.T) {
	var last lastErrors
	log := withLastErrors(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), &last)
	log.Error("could not persist a report", "err", "disk full")
	log.Warn("helper not reachable")
	for i := range 500 {
		log.Warn("sealed upload dropped", "n", i)
	}
	got := last.snapshot()
	if len(got) != 3 {
		t.Fatalf("kept %d lines, want 3 (one per cause):\n%s", len(got), strings.Join(got, "\n"))
	}
	for i, w := range []string{"disk full", "helper not reachable", "n=499"} {
		if !strings.Contains(got[i], w) {
			t.Errorf("line %d %q lacks %q", i, got[i], w)
		}
	}
}

// TestFreshOneServerReportsNotWarned: reports one server alone holds,
// received within the orphan grace (their other share is usually on its
// way during ingest), are shown by status but not warned about; once
// older than the grace, the next comparison warns at both servers.
func TestFreshOneServerReportsNotWarned(t *testing.T) {
	d := newDeployment(t, hugeEpsilon, 1)
	d.withOrphans(instances(6, 11))
	const warning = "reports held by this server only"
	st := d.status()
	for _, sv := range st.Servers {
		if sv.OneServerOnly == nil || *sv.OneServerOnly != 1 {
			t.Fatalf("%s: one-server-only %v, want 1 shown", sv.Role, sv.OneServerOnly)
		}
		if strings.Contains(strings.Join(sv.LastErrors, "\n"), warning) {
			t.Errorf("%s warns about a report received just now: %q", sv.Role, sv.LastErrors)
		}
	}
	for _, s := range []*Server{d.leader, d.helper} {
		s.orphanGrace.Store(int64(time.Nanosecond))
	}
	for _, sv := range d.status().Servers {
		if !strings.Contains(strings.Join(sv.LastErrors, "\n"), warning) {
			t.Errorf("%s does not warn about a report past the grace: %q", sv.Role, sv.LastErrors)
		}
	}
}

// check is one periodic check of TestRepeatedWarns: at its time, of
// the warning msg, failed with err (or succeeded if err is "").
type check struct {
	at       time.Duration
	msg, err string
}

// checks returns n checks of msg every step from start, failed with
// err ("" succeeded).
func checks(n int, start, step time.Duration, msg, err string) []check {
	var cs []check
	for k := range n {
		cs = append(cs, check{start + time.Duration(k)*step, msg, err})
	}
	return cs
}

// TestRepeatedWarns: a periodic check failing check after check is
// warned about when it starts, when its error changes and once per
// interval (with the failed checks since the last line), and its
// recovery logged once at INFO with the failed checks; each message is
// followed apart. The clock is the checks' (no wall clock).
func TestRepeatedWarns(t *testing.T) {
	const (
		every = time.Minute
		warnA = "level=WARN msg=a err=e1"
	)
	for _, c := range []struct {
		name   string
		checks []check
		want   []string
	}{
		{"one failure", checks(1, 0, 0, "a", "e1"), []string{warnA}},
		{"no failure", checks(10, 0, time.Second, "a", ""), nil},
		{"same error within the interval", checks(100, 0, every/100, "a", "e1"), []string{warnA}},
		{"once per interval with the count", checks(361, 0, every/120, "a", "e1"), []string{warnA,
			"level=WARN msg=a err=e1 failed_checks=120 failing_for=1m0s",
			"level=WARN msg=a err=e1 failed_checks=120 failing_for=2m0s",
			"level=WARN msg=a err=e1 failed_checks=120 failing_for=3m0s"}},
		{"changed error at once", append(checks(3, 0, time.Second, "a", "e1"), check{3 * time.Second, "a", "e2"}, check{4 * time.Second, "a", "e2"}),
			[]string{warnA, "level=WARN msg=a err=e2 failed_checks=3 failing_for=3s"}},
		{"recovered once", append(checks(5, 0, time.Second, "a", "e1"), checks(3, 5*time.Second, time.Second, "a", "")...),
			[]string{warnA, "level=INFO msg=\"a again\" failed_checks=5 failing_for=5s"}},
		{"failing anew after a recovery", []check{{0, "a", "e1"}, {time.Second, "a", ""}, {2 * time.Second, "a", "e1"}, {3 * time.Second, "a", "e1"}},
			[]string{warnA, "level=INFO msg=\"a again\" failed_checks=1 failing_for=1s", warnA}},
		{"messages apart", []check{{0, "a", "e1"}, {0, "b", "e1"}, {time.Second, "a", "e1"}, {time.Second, "b", "e1"}, {2 * time.Second, "a", ""}, {2 * time.Second, "b", "e1"}},
			[]string{warnA, "level=WARN msg=b err=e1", "level=INFO msg=\"a again\" failed_checks=2 failing_for=2s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			noTime := func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}
			w := newRepeatedWarns(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime})), every)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, ch := range c.checks {
				w.now = func() time.Time { return start.Add(ch.at) }
				if ch.err == "" {
					w.succeeded(ch.msg, ch.msg+" again")
				} else {
					w.failed(ch.msg, errors.New(ch.err))
				}
			}
			got := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				got = nil
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("logged\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
	if w := newRepeatedWarns(slog.Default(), -1); w.every != DefaultSummary {
		t.Errorf("with the summary off, repeated every %v, want DefaultSummary", w.every)
	}
}

// count returns the failed checks of msg's kind since its failure
// started (0 if it is not failing).
func (w *repeatedWarns) count(msg string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f := w.failing[msg]; f != nil {
		return f.failed
	}
	return 0
}
