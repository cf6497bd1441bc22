package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestFoldedUploadEditedOnPostgres is the adversary of the folds of a
// role's processes (PostgreSQL): a report reaching the leader only is
// prepared there (folded) but never accepted; then its stored upload is
// replaced, in the table, by a valid one of another bin under the same
// ID, its record's checksum recomputed. A release over the other
// reports takes the folded report's output out of the folds, re-derived
// from its upload read back: it is refused (server.ErrUploadChanged,
// naming the report), never answered with the folds less another
// output — a skew of the two bins' difference. Quarantined at the
// leader, the report leaves the folds and a release counts exactly the
// others. Unedited (the control), the release answers their exact
// counts.
func TestFoldedUploadEditedOnPostgres(t *testing.T) {
	for _, edit := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited=%v", edit), func(t *testing.T) { testFoldedUploadEdited(t, edit) })
	}
}

// testFoldedUploadEdited is TestFoldedUploadEditedOnPostgres, the
// folded upload edited if edit.
func testFoldedUploadEdited(t *testing.T, edit bool) {
	inst := instances(3, 31)
	d, dsns := newFoldingDeployment(t, inst)
	leaderDB := dsns[server.Leader]
	var id payload.ReportID
	id[0], id[15] = 0x31, 0xf0
	share := func(x party.Instance) []byte { return d.verifiedKeysAt(id, x).Shares[0] }
	folded := &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: share(party.Instance{Score: 0.05, Label: 1})}
	if err := upload(d.newParty(), manifest.LeaderName, folded); err != nil {
		t.Fatal(err)
	}
	waitFolded(t, leaderDB, id)
	if edit {
		other := &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: share(party.Instance{Score: 0.95, Label: 0})}
		replaceUpload(t, leaderDB, d.m.Dataset, other)
	}
	a := d.analyst()
	e, err := a.ECDF(context.Background())
	if !edit {
		if err != nil {
			t.Fatalf("a release over the reports both servers hold: %v", err)
		}
		checkExact(t, e, plainCounts(t, d.m, inst))
		return
	}
	if !errors.Is(err, server.ErrUploadChanged) || !strings.Contains(err.Error(), id.String()) {
		t.Fatalf("a release while a folded upload was edited: %v (answer %v); want a refusal with %q naming report %v", err, e, server.ErrUploadChanged, id)
	}
	addrs := d.stopBoth()
	if _, err := store.QuarantineBackend(leaderDB, "", d.m.Dataset, []payload.ReportID{id}); err != nil {
		t.Fatal(err)
	}
	d.startBoth(addrs)
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}

// newFoldingDeployment starts a deployment whose servers each store in
// a PostgreSQL schema of their own (their processes preparing and
// folding the reports), its parties having uploaded inst, and returns it
// with the schemas by role.
func newFoldingDeployment(t *testing.T, inst []party.Instance) (*deployment, map[server.Role]string) {
	t.Helper()
	d, dsns := newPostgresDeployment(t, nil)
	d.submitAll(inst)
	return d, dsns
}

// waitFolded waits until the processes storing in the schema of dsn
// folded report id.
func waitFolded(t *testing.T, dsn string, id payload.ReportID) {
	t.Helper()
	waitPG(t, dsn, fmt.Sprintf(`SELECT count(*) FROM fedecdf_prepared WHERE id = '\x%x' AND fold IS NOT NULL`, id[:]), 1)
}

// foldEditRestart uploads the leader's share of report id to the
// leader only and waits until it is folded there (leaderDB); with both
// servers stopped, it replaces that stored upload by the share edited
// (if not nil), restarts both, and uploads the helper's share to the
// helper: the leader then holds the edited upload of a folded report.
func foldEditRestart(t *testing.T, d *deployment, leaderDB string, id payload.ReportID, shares [2][]byte, edited []byte) {
	t.Helper()
	if err := upload(d.newParty(), manifest.LeaderName, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: shares[0]}); err != nil {
		t.Fatal(err)
	}
	waitFolded(t, leaderDB, id)
	addrs := d.stopBoth()
	if edited != nil {
		replaceUpload(t, leaderDB, d.m.Dataset, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: edited})
	}
	d.startBoth(addrs)
	if err := upload(d.newParty(), manifest.HelperName, &protocol.Upload{Dataset: d.m.Dataset, Report: id, Share: shares[1]}); err != nil {
		t.Fatal(err)
	}
}

// replaceUpload replaces, in the database of dsn, the stored upload of
// up's report by up, its record's checksum recomputed (the record: ID ‖
// receipt time ‖ upload ‖ CRC-32C): someone who can write the table.
func replaceUpload(t *testing.T, dsn, dataset string, up *protocol.Upload) {
	t.Helper()
	where := fmt.Sprintf(`WHERE dataset = '%s' AND id = '\x%x'`, dataset, up.Report[:])
	var rec []byte
	pgtest.QueryRow(t, dsn, `SELECT rec FROM fedecdf_reports `+where, &rec)
	body := append(rec[:len(up.Report)+8:len(up.Report)+8], protocol.Encode(up)...)
	rec = store.Seal("reports/"+dataset, up.Report[:], body)
	pgtest.Exec(t, dsn, fmt.Sprintf(`UPDATE fedecdf_reports SET rec = '\x%x' `, rec)+where)
}
