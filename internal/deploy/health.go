package deploy

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fedecdf/fedecdf/server"
)

// registerHealth adds to the metrics listener's mux an index at /, the
// liveness probe /healthz and the readiness probe /readyz, for an
// orchestrator (systemd, Kubernetes) or a load balancer.
func (s *Server) registerHealth(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "fedecdf %s server\n/metrics  Prometheus text format\n/healthz  200 while the process serves\n/readyz   200 when the store is readable and (leader) the helper answered the last check, 503 and the reason otherwise\n", s.cfg.Role)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		ready, lines := s.readiness()
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	})
}

// readiness says whether the server can do its work now, and why, one
// line per check: its store answers, and at the leader the helper
// answered the last check (the start-up check, then every PeerCheck).
// The helper's readiness does not wait for the leader's first call
// (the helper starts first, and takes uploads before it), but its line
// says when the leader last called.
func (s *Server) readiness() (bool, []string) {
	st, err := s.state()
	if err != nil {
		return false, []string{"not ready", "store: " + err.Error()}
	}
	lines := []string{"store: open"}
	ready := true
	contact := "never"
	if st.PeerCheckedAt > 0 {
		contact = time.Unix(st.PeerCheckedAt, 0).UTC().Format(time.RFC3339)
	}
	switch {
	case s.cfg.Role == server.Helper && st.PeerReachable:
		lines = append(lines, "leader: last call "+contact)
	case s.cfg.Role == server.Helper:
		lines = append(lines, "leader: no call yet (not needed to take uploads)")
	case st.PeerReachable:
		lines = append(lines, "helper: reachable at the last check, "+contact)
	default:
		ready = false
		lines = append(lines, fmt.Sprintf("helper: not reachable at the last check (%s): %s", contact, st.PeerError))
	}
	if ready {
		return true, append([]string{"ready"}, lines...)
	}
	return false, append([]string{"not ready"}, lines...)
}
