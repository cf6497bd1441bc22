package deploy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestFoldedThenAcceptedOnPostgres is the adversary of a report folded
// and then accepted (PostgreSQL): a report reaching the leader first is
// prepared there and folded; with both servers stopped, its stored
// upload is replaced, in the table, by another valid one of another bin
// under the same ID (the same seeds, so that its correlated values are
// those of the folded one; its record's checksum recomputed); restarted,
// the leader holds the edited upload, and the helper then receives its
// share of the folded report. Verified from the folded upload's sketch,
// the report would pass, its acceptance keeping the edited upload's
// digest while the release sums the folded output, which no
// re-derivation of the uploads held gives. The release is refused
// instead (server.ErrUploadChanged, naming the report); quarantined at
// both servers, the report leaves the folds and a release counts
// exactly the others. Unedited (the control), the release counts the
// report too.
func TestFoldedThenAcceptedOnPostgres(t *testing.T) {
	for _, edit := range []bool{false, true} {
		t.Run(fmt.Sprintf("edited=%v", edit), func(t *testing.T) { testFoldedThenAccepted(t, edit) })
	}
}

// testFoldedThenAccepted is TestFoldedThenAcceptedOnPostgres, the
// folded upload edited if edit.
func testFoldedThenAccepted(t *testing.T, edit bool) {
	inst := instances(3, 32)
	d, dsns := newFoldingDeployment(t, inst)
	leaderDB := dsns[server.Leader]
	var id payload.ReportID
	id[0], id[15] = 0x32, 0xf1
	var seed [32]byte
	seed[0] = 0x32
	x := party.Instance{Score: 0.05, Label: 1}
	folded := d.verifiedKeysFrom(id, x, rand.NewChaCha8(seed))
	var edited []byte
	if edit {
		edited = d.verifiedKeysFrom(id, party.Instance{Score: 0.95, Label: 1}, rand.NewChaCha8(seed)).Shares[0]
	}
	foldEditRestart(t, d, leaderDB, id, [2][]byte{folded.Shares[0], folded.Shares[1]}, edited)
	e, err := d.analyst().ECDF(context.Background())
	if !edit {
		if err != nil {
			t.Fatalf("a release over the reports both servers hold: %v", err)
		}
		checkExact(t, e, plainCounts(t, d.m, append(inst, x)))
		return
	}
	if !errors.Is(err, server.ErrUploadChanged) || !strings.Contains(err.Error(), id.String()) {
		t.Fatalf("a release while a folded upload was edited before its verification: %v (answer %v); want a refusal with %q naming report %v", err, e, server.ErrUploadChanged, id)
	}
	addrs := d.stopBoth()
	for _, dsn := range dsns {
		if _, err := store.QuarantineBackend(dsn, "", d.m.Dataset, []payload.ReportID{id}); err != nil {
			t.Fatal(err)
		}
	}
	d.startBoth(addrs)
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}
