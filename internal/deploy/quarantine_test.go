package deploy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// TestDamagedReportQuarantined is the audit's bit rot: one byte of one
// stored upload flipped at both servers. Neither starts — each names its
// file and the report (before this, one computed on the damaged share
// and answered a wrong ECDF silently). Quarantined at both, they start
// without it: the release created over it is refused rather than
// answered over another set, and a new release counts the other reports.
// The same holds when whoever edited the upload also recomputed its
// record's checksum ("resealed"): the upload's digest in the verdict
// record of its acceptance refuses it (server.ErrUploadChanged).
func TestDamagedReportQuarantined(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reseal bool
	}{{"flipped", false}, {"resealed", true}} {
		t.Run(tc.name, func(t *testing.T) { testDamagedReportQuarantined(t, tc.reseal) })
	}
}

// testDamagedReportQuarantined is TestDamagedReportQuarantined, the
// damaged record's checksum recomputed if reseal.
func testDamagedReportQuarantined(t *testing.T, reseal bool) {
	d := newDeployment(t, hugeEpsilon, 1)
	for _, x := range []float64{0.1, 0.3, 0.5, 0.7, 0.9} {
		if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: x, Label: 1}); err != nil {
			t.Fatal(err)
		}
	}
	first := d.query()
	old, err := analyst.ParseReleaseID(first.Stored.Release)
	if err != nil || first.N != 5 {
		t.Fatalf("the first release: n = %d, %v", first.N, err)
	}
	var bad payload.ReportID
	uploads := map[server.Role][]byte{}
	for _, s := range []*Server{d.leader, d.helper} {
		err := s.store.Reports(d.m.Dataset, func(id payload.ReportID, up []byte) error {
			if bad == (payload.ReportID{}) {
				bad = id
			}
			if id == bad {
				uploads[s.cfg.Role] = up
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	addrs := map[server.Role]string{server.Leader: d.leader.Addrs()[0].String(), server.Helper: d.helper.Addrs()[0].String()}
	d.leader.Close()
	d.helper.Close()
	for role, up := range uploads {
		path := filepath.Join(d.dir, role.String()+".db")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(b, up[len(up)/2:])
		if at < 0 {
			t.Fatalf("the %v's upload of report %v is not in its file", role, bad)
		}
		b[at+3] ^= 0x01
		if reseal { // the record: ID ‖ receipt time ‖ upload ‖ CRC-32C
			start, end := at-len(up)/2-24, at-len(up)/2+len(up)
			sealed := store.Seal("reports/"+d.m.Dataset, bad[:], b[start:end])
			copy(b[end:], sealed[end-start:])
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = d.startWith(role, d.m, ServerConfig{Store: path})
		if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), bad.String()) {
			t.Fatalf("starting the %v on its damaged store: %v; want ErrDamaged naming the file and report %v", role, err, bad)
		}
		if changed := errors.Is(err, server.ErrUploadChanged); changed != reseal {
			t.Fatalf("starting the %v on its damaged store: %v; its checksum recomputed: %v", role, err, reseal)
		}
		if _, err := store.Quarantine(path, d.m.Dataset, []payload.ReportID{bad}); err != nil {
			t.Fatal(err)
		}
	}
	d.helper = d.start(server.Helper, addrs[server.Helper])
	d.leader = d.start(server.Leader, addrs[server.Leader])
	if _, err := d.readRelease(old); err == nil || !strings.Contains(err.Error(), server.ErrReportSetChanged.Error()) {
		t.Fatalf("reading the release created over the quarantined report: %v", err)
	}
	if again := d.query(); again.N != 4 {
		t.Fatalf("a new release over %d reports, want the 4 kept", again.N)
	}
	if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: 0.2, Label: 1}); err != nil {
		t.Fatal(err)
	}
}
