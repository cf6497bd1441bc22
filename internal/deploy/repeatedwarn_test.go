package deploy

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestRefusedReportWarnedOnceOnPostgres: while a report is refused —
// prepared and folded at the leader, its upload then edited in the
// leader's table (as in TestFoldedUploadEditedOnPostgres) and read back
// at a restart, its other share reaching the helper after —, the
// leader's verification fails at every peer check (ErrUploadChanged);
// it is warned about once over many checks, not once per check
// (repeatedWarns: the summary interval is an hour), and the warning
// stays in status's last errors.
func TestRefusedReportWarnedOnceOnPostgres(t *testing.T) {
	var logs syncBuffer
	d, dsns := newPostgresDeployment(t, func(c *ServerConfig) {
		c.Logger, c.PeerCheck, c.Summary = logs.logger(t, "info"), 10*time.Millisecond, time.Hour
	})
	d.submitAll(instances(3, 32))
	var id payload.ReportID
	id[0], id[15] = 0x32, 0xf0
	r := d.verifiedKeysAt(id, party.Instance{Score: 0.05, Label: 1})
	other := d.verifiedKeysAt(id, party.Instance{Score: 0.95, Label: 0}).Shares[0]
	foldEditRestart(t, d, dsns[server.Leader], id, [2][]byte{r.Shares[0], r.Shares[1]}, other)
	const checks = 30
	for deadline := time.Now().Add(time.Minute); d.leader.warns.count(verifyUnfinished) < checks; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the leader's verification failed %d checks in a minute, want %d:\n%s", d.leader.warns.count(verifyUnfinished), checks, logs.String())
		}
	}
	line := regexp.MustCompile(`(?m)^.*level=WARN msg="` + regexp.QuoteMeta(verifyUnfinished) + `".*$`)
	lines := line.FindAllString(logs.String(), -1)
	if len(lines) != 1 || !strings.Contains(lines[0], server.ErrUploadChanged.Error()) || !strings.Contains(lines[0], id.String()) {
		t.Fatalf("%d checks failed, %d warnings, want one naming %q and report %v:\n%s", checks, len(lines), server.ErrUploadChanged, id, strings.Join(lines, "\n"))
	}
	if last := strings.Join(d.status().Servers[0].LastErrors, "\n"); !strings.Contains(last, verifyUnfinished) {
		t.Errorf("status's last errors lack the refusal: %q", last)
	}
}
