package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fedecdf/fedecdf/internal/protocol"
)

// counters count a server's events since it started.
type counters struct {
	accepted, duplicates, rejected atomic.Int64 // reports
	released, releaseRefused       atomic.Int64 // releases
	answered, queryFailed          atomic.Int64 // queries
	purged                         atomic.Int64 // one-server-only reports
}

// countersSnapshot is the value of counters at one time.
type countersSnapshot struct {
	accepted, duplicates, rejected, released, releaseRefused, answered, queryFailed, purged int64
}

func (c *counters) snapshot() countersSnapshot {
	return countersSnapshot{
		c.accepted.Load(), c.duplicates.Load(), c.rejected.Load(), c.released.Load(),
		c.releaseRefused.Load(), c.answered.Load(), c.queryFailed.Load(), c.purged.Load(),
	}
}

// summarise logs, every Summary until ctx ends, one INFO line of what
// happened since the last (uploads accepted, duplicate and rejected,
// releases, queries) and what the server holds, when anything happened
// or what it holds changed (verification decides reports without an
// upload).
func (s *Server) summarise(ctx context.Context) {
	var last countersSnapshot
	var held [3]int
	s.every(ctx, s.cfg.Summary, func() {
		now := s.counters.snapshot()
		st, err := s.state()
		if err != nil {
			s.log.Error("summary", "err", err)
			return
		}
		if now == last && held == [3]int{st.Reports, st.Held, st.OneServer} {
			return
		}
		s.log.Info("summary", "interval", s.cfg.Summary.String(),
			"uploads_accepted", now.accepted-last.accepted, "uploads_duplicate", now.duplicates-last.duplicates,
			"uploads_rejected", now.rejected-last.rejected, "releases", now.released-last.released,
			"releases_refused", now.releaseRefused-last.releaseRefused, "queries", now.answered-last.answered,
			"queries_failed", now.queryFailed-last.queryFailed, "purged", now.purged-last.purged,
			"reports_counted", st.Reports, "reports_held", st.Held, "one_server_only", st.OneServer,
			"spent_epsilon", st.SpentEpsilon, "total_epsilon", st.TotalEpsilon)
		last, held = now, [3]int{st.Reports, st.Held, st.OneServer}
	})
}

// serveMetrics serves the Prometheus text format at http://addr/metrics,
// and the health probes (registerHealth), until ctx ends; it returns
// once the address is bound.
func (s *Server) serveMetrics(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", addr, err)
	}
	s.metricsAddr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		if err := s.writeMetrics(w); err != nil {
			s.log.Error("metrics", "err", err)
		}
	})
	s.registerHealth(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.ops.Add(2)
	go func() {
		defer s.ops.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics endpoint stopped", "err", err)
		}
	}()
	go func() {
		defer s.ops.Done()
		<-ctx.Done()
		_ = srv.Close()
	}()
	s.log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return nil
}

// labelEscaper escapes a label value of the Prometheus text format.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// metric is one sample of the metrics endpoint.
type metric struct {
	name, kind, help string
	value            float64
}

// writeMetrics writes the server's metrics in the Prometheus text
// format, labelled with its role and dataset.
func (s *Server) writeMetrics(w io.Writer) error {
	st, err := s.state()
	if err != nil {
		return err
	}
	c := s.counters.snapshot()
	reachable := 0.0
	if st.PeerReachable {
		reachable = 1
	}
	metrics := []metric{
		{"fedecdf_reports_accepted_total", "counter", "Reports stored since the server started (duplicates excluded).", float64(c.accepted)},
		{"fedecdf_reports_duplicate_total", "counter", "Uploads of reports the server already held.", float64(c.duplicates)},
		{"fedecdf_reports_rejected_total", "counter", "Uploads refused (malformed, wrong dataset, full, not stored).", float64(c.rejected)},
		{"fedecdf_reports_purged_total", "counter", "Reports held by this server only that were purged.", float64(c.purged)},
		{"fedecdf_releases_created_total", "counter", "Release requests answered since the server started.", float64(c.released)},
		{"fedecdf_releases_refused_total", "counter", "Release requests refused (budget, policy, too few reports, helper unreachable).", float64(c.releaseRefused)},
		{"fedecdf_queries_answered_total", "counter", "Queries answered.", float64(c.answered)},
		{"fedecdf_queries_failed_total", "counter", "Queries that failed.", float64(c.queryFailed)},
		{"fedecdf_reports_counted", "gauge", "Reports the server counts (verified and accepted).", float64(st.Reports)},
		{"fedecdf_reports_held", "gauge", "Reports received and not yet decided by verification.", float64(st.Held)},
		{"fedecdf_reports_one_server_only", "gauge", "Reports held undecided that the other server did not know at the last comparison.", float64(st.OneServer)},
		{"fedecdf_releases", "gauge", "Releases recorded.", float64(len(st.Releases))},
		{"fedecdf_budget_spent_epsilon", "gauge", "Epsilon charged to the ledger.", st.SpentEpsilon},
		{"fedecdf_budget_total_epsilon", "gauge", "Total epsilon budget of the dataset.", st.TotalEpsilon},
		{"fedecdf_budget_spent_delta", "gauge", "Delta charged to the ledger.", st.SpentDelta},
		{"fedecdf_peer_reachable", "gauge", "Leader: 1 if the helper answered the last check. Helper: 1 once the leader has called.", reachable},
		{"fedecdf_peer_last_contact_timestamp_seconds", "gauge", "Unix time of the last check of (leader) or call from (helper) the other server.", float64(st.PeerCheckedAt)},
	}
	serverLabels := fmt.Sprintf(`role="%s",dataset="%s"`, st.Role, labelEscaper.Replace(s.cfg.Manifest.Dataset))
	labels := "{" + serverLabels + "}"
	for _, m := range metrics {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s%s %s\n", m.name, m.help, m.name, m.kind, m.name, labels, strconv.FormatFloat(m.value, 'g', -1, 64)); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "# HELP fedecdf_reports_verification_rejected Reports rejected at verification, per reason (malformed, mismatch, proof, replay).\n# TYPE fedecdf_reports_verification_rejected gauge\n"); err != nil {
		return err
	}
	for _, rj := range st.Rejected {
		if _, err := fmt.Fprintf(w, "fedecdf_reports_verification_rejected{%s,reason=\"%s\"} %d\n", serverLabels, rj.Reason, rj.Count); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "# HELP fedecdf_protocol_version Wire protocol version.\n# TYPE fedecdf_protocol_version gauge\nfedecdf_protocol_version%s %d\n", labels, protocol.Version)
	return err
}
