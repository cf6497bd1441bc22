package deploy

import (
	"context"
	"maps"
	"time"

	"github.com/fedecdf/fedecdf/internal/verify"
)

// verifyTimeout bounds one periodic verification run of the leader.
const verifyTimeout = 10 * time.Minute

// verifyUnfinished is the warning of a periodic verification that did
// not finish (repeatedWarns: once per summary interval while it fails).
const verifyUnfinished = "verification of the reports held not finished: it runs again at the next check and before every release"

// verifyReports runs, at the leader, the
// verification of the reports held and not yet decided with the helper
// (server.Server.Verify; every release runs it too), and logs the
// rejections. watchHelper calls it every PeerCheck once the helper
// agrees on the manifest. A verification that fails check after check
// (a refused report: ErrUploadChanged) is warned about when it starts,
// when its error changes and once per summary interval, and its end
// logged once (repeatedWarns).
func (s *Server) verifyReports() {
	ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
	defer cancel()
	s.warns.check(verifyUnfinished, "verification of the reports held finished again", s.srv.Verify(ctx))
	s.logRejected()
}

// logRejected logs, at WARN, the reports rejected at verification per
// reason, whenever they changed since the last call (which is made from
// one goroutine: watchHelper at the leader, a PeerCheck loop at the
// helper).
func (s *Server) logRejected() {
	now, err := s.srv.Rejected(s.cfg.Manifest.Dataset)
	if err != nil || maps.Equal(now, s.rejected) {
		return
	}
	s.log.Warn("reports rejected by verification", "rejected", verify.RejectedText(now))
	s.rejected = now
}
