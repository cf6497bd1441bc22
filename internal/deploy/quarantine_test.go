package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/pgtest"
	"github.com/fedecdf/fedecdf/internal/store"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/server"
)

// damageStores are the stores the damage tests run on: each server's
// bbolt file, or a PostgreSQL schema of its own (skipped without
// FEDECDF_TEST_POSTGRES, failed under CI=true: internal/pgtest).
var damageStores = []string{"bbolt", "postgres"}

// newDamageDeployment starts a deployment whose servers keep their
// state on stores of kind (damageStores) and returns it with each
// role's store (its file, or its DSN).
func newDamageDeployment(t *testing.T, kind string) (*deployment, map[server.Role]string) {
	t.Helper()
	if kind == "postgres" {
		return newPostgresDeployment(t, nil)
	}
	d := newDeployment(t, hugeEpsilon, 1)
	return d, map[server.Role]string{server.Leader: filepath.Join(d.dir, "leader.db"), server.Helper: filepath.Join(d.dir, "helper.db")}
}

// newPostgresDeployment starts a deployment whose servers each store in
// a PostgreSQL schema of their own, tweak (if not nil) applied to each
// server's configuration after its store is set, and returns it with
// the schemas by role.
func newPostgresDeployment(t *testing.T, tweak func(*ServerConfig)) (*deployment, map[server.Role]string) {
	t.Helper()
	dsns := map[server.Role]string{server.Leader: pgtest.Schema(t), server.Helper: pgtest.Schema(t)}
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.Store = dsns[c.Role]
		if tweak != nil {
			tweak(c)
		}
	})
	return d, dsns
}

// storedUploads returns each server's stored upload of report id.
func (d *deployment) storedUploads(id payload.ReportID) map[server.Role][]byte {
	d.t.Helper()
	uploads := map[server.Role][]byte{}
	for _, s := range []*Server{d.leader, d.helper} {
		err := s.store.Uploads(d.m.Dataset, []payload.ReportID{id}, func(_ payload.ReportID, up []byte) error {
			uploads[s.cfg.Role] = bytes.Clone(up)
			return nil
		})
		if err != nil {
			d.t.Fatal(err)
		}
	}
	return uploads
}

// firstReport returns the first report the leader's store holds.
func (d *deployment) firstReport() payload.ReportID {
	d.t.Helper()
	var first payload.ReportID
	err := d.leader.store.Reports(d.m.Dataset, func(id payload.ReportID, _ []byte) error {
		if first == (payload.ReportID{}) {
			first = id
		}
		return nil
	})
	if err != nil || first == (payload.ReportID{}) {
		d.t.Fatalf("no stored report: %v", err)
	}
	return first
}

// stopBoth closes both servers and returns the address each listened on.
func (d *deployment) stopBoth() map[server.Role]string {
	addrs := map[server.Role]string{server.Leader: d.leader.Addrs()[0].String(), server.Helper: d.helper.Addrs()[0].String()}
	d.leader.Close()
	d.helper.Close()
	return addrs
}

// startBoth starts the helper and then the leader again at addrs
// (stopBoth's).
func (d *deployment) startBoth(addrs map[server.Role]string) {
	d.helper = d.start(server.Helper, addrs[server.Helper])
	d.leader = d.start(server.Leader, addrs[server.Leader])
}

// checkQuarantined starts both servers again at addrs, a report of the
// release old quarantined in their stores, and checks what package
// server's doc states: old is refused rather than answered over
// another set (server.ErrReportSetChanged), and a new release counts
// the kept reports.
func (d *deployment) checkQuarantined(addrs map[server.Role]string, old payload.ReleaseID, kept int64) {
	d.t.Helper()
	d.startBoth(addrs)
	if _, err := d.readRelease(old); !errors.Is(err, server.ErrReportSetChanged) {
		d.t.Fatalf("reading the release created over the quarantined report: %v, want %q", err, server.ErrReportSetChanged)
	}
	if again := d.query(); again.N != kept {
		d.t.Fatalf("a new release over %d reports, want the %d kept", again.N, kept)
	}
}

// damageUpload flips one byte in the middle of the stored upload up of
// report id of dataset, in place, in the store spec (a bbolt file, which
// a running server may hold open, or a PostgreSQL DSN: its row edited
// with SQL). If reseal, whoever damaged it also recomputed the record's
// checksum (the record: ID ‖ receipt time ‖ upload ‖ CRC-32C), so that
// only the digest the servers keep of the upload accepted can catch it.
func damageUpload(t *testing.T, spec, dataset string, id payload.ReportID, up []byte, reseal bool) {
	t.Helper()
	const header = len(id) + 8
	edit := func(rec []byte) {
		rec[header+len(up)/2+3] ^= 0x01
		if reseal {
			copy(rec, store.Seal("reports/"+dataset, id[:], rec[:len(rec)-store.ChecksumLen]))
		}
	}
	if store.IsPostgres(spec) {
		var rec []byte
		where := fmt.Sprintf(`WHERE dataset = '%s' AND id = '\x%x'`, dataset, id[:])
		pgtest.QueryRow(t, spec, `SELECT rec FROM fedecdf_reports `+where, &rec)
		if len(rec) != header+len(up)+store.ChecksumLen {
			t.Fatalf("the row of report %v holds %d bytes, want %d", id, len(rec), header+len(up)+store.ChecksumLen)
		}
		edit(rec)
		pgtest.Exec(t, spec, fmt.Sprintf(`UPDATE fedecdf_reports SET rec = '\x%x' `, rec)+where)
		return
	}
	f, err := os.OpenFile(spec, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	at := -1 // the record: its ID, then the upload after the receipt time
	for i := 0; at < 0; {
		j := bytes.Index(b[i:], id[:])
		if j < 0 {
			break
		}
		if bytes.HasPrefix(b[i+j+header:], up) {
			at = i + j
		}
		i += j + 1
	}
	if at < 0 {
		t.Fatalf("the record of report %v is not in %s", id, spec)
	}
	rec := b[at : at+header+len(up)+store.ChecksumLen]
	edit(rec)
	if _, err := f.WriteAt(rec, int64(at)); err != nil { // in place: a running server maps the file
		t.Fatal(err)
	}
}

// TestDamagedReportQuarantined is the audit's bit rot: one byte of one
// stored upload flipped at both servers. Neither starts — each names its
// store and the report (before this, one computed on the damaged share
// and answered a wrong ECDF silently). Quarantined at both, they start
// without it: the release created over it is refused rather than
// answered over another set, and a new release counts the other reports.
// The same holds when whoever edited the upload also recomputed its
// record's checksum ("resealed"): the upload's digest in the verdict
// record of its acceptance refuses it (server.ErrUploadChanged). Both on
// bbolt files and on PostgreSQL, the row edited with SQL.
func TestDamagedReportQuarantined(t *testing.T) {
	for _, kind := range damageStores {
		for _, tc := range []struct {
			name   string
			reseal bool
		}{{"flipped", false}, {"resealed", true}} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) { testDamagedReportQuarantined(t, kind, tc.reseal) })
		}
	}
}

// testDamagedReportQuarantined is TestDamagedReportQuarantined on stores
// of kind, the damaged record's checksum recomputed if reseal.
func testDamagedReportQuarantined(t *testing.T, kind string, reseal bool) {
	d, specs := newDamageDeployment(t, kind)
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
	bad := d.firstReport()
	uploads := d.storedUploads(bad)
	addrs := d.stopBoth()
	for role, up := range uploads {
		spec := specs[role]
		damageUpload(t, spec, d.m.Dataset, bad, up, reseal)
		_, err = d.startWith(role, d.m, ServerConfig{Store: spec})
		if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), bad.String()) {
			t.Fatalf("starting the %v on its damaged store: %v; want ErrDamaged naming report %v", role, err, bad)
		}
		if kind == "bbolt" && !strings.Contains(err.Error(), spec) {
			t.Fatalf("starting the %v on its damaged store: %v; want its file named", role, err)
		}
		if name := store.Name(spec); kind == "postgres" && (!strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "file") ||
			!reseal && !strings.Contains(err.Error(), "table fedecdf_reports, row seq ")) {
			t.Fatalf("starting the %v on its damaged store: %v; want %s named (and, its checksum failing, the table and row), not a file", role, err, name)
		}
		if changed := errors.Is(err, server.ErrUploadChanged); changed != reseal {
			t.Fatalf("starting the %v on its damaged store: %v; its checksum recomputed: %v", role, err, reseal)
		}
		if _, err := store.QuarantineBackend(spec, "", d.m.Dataset, []payload.ReportID{bad}); err != nil {
			t.Fatal(err)
		}
	}
	d.checkQuarantined(addrs, old, 4)
	if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: 0.2, Label: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestEditedUploadOfOldReleaseRefused is an upload edited in the store
// while the servers run, its record's checksum recomputed: a release is
// created, the dataset grows (another release), both servers restart
// (a clean replay), then one stored upload of the first release is
// edited at both. Reading the first release again re-derives its
// reports from their stored uploads: it is refused, naming the report
// (server.ErrUploadChanged), never answered over the edited upload.
// Quarantined at both servers, the report leaves the dataset as
// package server's doc states: both releases over it are refused
// (server.ErrReportSetChanged), and a new release counts every other
// report.
func TestEditedUploadOfOldReleaseRefused(t *testing.T) {
	for _, kind := range damageStores {
		t.Run(kind, func(t *testing.T) {
			d, specs := newDamageDeployment(t, kind)
			submit := func(xs ...float64) {
				for _, x := range xs {
					if _, err := d.newParty().Submit(context.Background(), party.Instance{Score: x, Label: 1}); err != nil {
						t.Fatal(err)
					}
				}
			}
			submit(0.1, 0.3, 0.5)
			first := d.query()
			old, err := analyst.ParseReleaseID(first.Stored.Release)
			if err != nil || first.N != 3 {
				t.Fatalf("the first release: n = %d, %v", first.N, err)
			}
			bad := d.firstReport()
			submit(0.2, 0.4, 0.6, 0.8)
			if grown := d.query(); grown.N != 7 {
				t.Fatalf("the second release: n = %d, want 7", grown.N)
			}
			d.restartBoth()
			for role, up := range d.storedUploads(bad) {
				damageUpload(t, specs[role], d.m.Dataset, bad, up, true)
			}
			_, err = d.readRelease(old)
			if !errors.Is(err, server.ErrUploadChanged) || !strings.Contains(err.Error(), bad.String()) {
				t.Fatalf("reading the release over the edited upload: %v; want a refusal naming %q and report %v", err, server.ErrUploadChanged, bad)
			}
			addrs := d.stopBoth()
			for _, spec := range specs {
				if _, err := store.QuarantineBackend(spec, "", d.m.Dataset, []payload.ReportID{bad}); err != nil {
					t.Fatal(err)
				}
			}
			d.checkQuarantined(addrs, old, 6)
		})
	}
}
