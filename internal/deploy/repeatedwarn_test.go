package deploy

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/protocol"
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
	dsns := map[server.Role]string{server.Leader: pgtest.Schema(t), server.Helper: pgtest.Schema(t)}
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Store, c.Logger, c.PeerCheck, c.Summary = dsns[c.Role], logs.logger(t, "info"), 10*time.Millisecond, time.Hour
	})
	d.submitAll(instances(3, 32))
	var id payload.ReportID
	id[0], id[15] = 0x32, 0xf0
	r := d.verifiedKeysAt(id, party.Instance{Score: 0.05, Label: 1})
	if err := upload(d.newParty(), manifest.LeaderName, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: r.Shares[0]}); err != nil {
		t.Fatal(err)
	}
	leaderDB := dsns[server.Leader]
	waitPG(t, leaderDB, fmt.Sprintf(`SELECT count(*) FROM fedecdf_prepared WHERE id = '\x%x' AND fold IS NOT NULL`, id[:]), 1)
	addrs := d.stopBoth()
	other := d.verifiedKeysAt(id, party.Instance{Score: 0.95, Label: 0}).Shares[0]
	replaceUpload(t, leaderDB, d.m.Dataset, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: other})
	d.helper = d.start(server.Helper, addrs[server.Helper])
	d.leader = d.start(server.Leader, addrs[server.Leader])
	if err := upload(d.newParty(), manifest.HelperName, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: r.Shares[1]}); err != nil {
		t.Fatal(err)
	}
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
