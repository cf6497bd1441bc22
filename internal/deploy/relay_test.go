package deploy

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudflare/circl/kem"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/party"
)

// TestRelayUpload: in relay mode parties reach the leader only (their
// copy of the manifest gives the helper an address nobody listens on),
// yet both servers hold every report: at ε = 2^48 the counts are exact.
// A resent report is a duplicate at both servers.
func TestRelayUpload(t *testing.T) {
	const n = 25
	d := newDeploymentMode(t, hugeEpsilon, n, manifest.UploadRelay)
	partyView := *d.m
	partyView.Helper.Addrs = []string{"/ip4/127.0.0.1/tcp/1"}
	p, err := client.NewParty(&partyView, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	inst := instances(n, 5)
	sendThenResend(t, p, inst)
	for _, s := range []*Server{d.leader, d.helper} {
		if got, err := s.NumReports(); got != n || err != nil {
			t.Fatalf("the %s stored %d reports (%v), want %d", s.cfg.Role, got, err, n)
		}
	}
	checkExact(t, d.query(), plainCounts(t, d.m, inst))
}

// sendThenResend has p send the report of each instance, each new to
// the servers, then the first one again, which must be a duplicate.
func sendThenResend(t *testing.T, p *client.Party, inst []party.Instance) {
	t.Helper()
	var first *client.Report
	for _, x := range inst {
		r, err := p.NewReport(x)
		if err != nil {
			t.Fatal(err)
		}
		if dup, err := p.Send(context.Background(), r); err != nil || dup {
			t.Fatalf("upload: duplicate=%v, %v", dup, err)
		}
		if first == nil {
			first = r
		}
	}
	if dup, err := p.Send(context.Background(), first); err != nil || !dup {
		t.Fatalf("resending a report: duplicate=%v, %v", dup, err)
	}
}

// TestRelayRefusedInDirectMode: a direct deployment does not serve the
// relay protocol.
func TestRelayRefusedInDirectMode(t *testing.T) {
	d := newDeployment(t, 1, 1)
	relayView := *d.m
	relayView.Upload = manifest.UploadRelay
	p, err := client.NewParty(&relayView, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Submit(context.Background(), instances(1, 6)[0]); err == nil {
		t.Fatal("a direct-mode leader accepted a relayed report")
	}
}

func testSealed(t testing.TB, helper *manifest.Identity) (*protocol.Upload, *sealed.Upload) {
	up := &protocol.Upload{Dataset: "d", Report: payload.ReportID{4, 2}, Key: []byte("the helper's DCF key")}
	s, err := sealed.SealUpload(helper.HPKEPublicKey, up)
	if err != nil {
		t.Fatal(err)
	}
	return up, s
}

// TestSealedUpload: only the helper's key opens a sealed share, and the
// leader cannot move it to another report or dataset or alter it.
func TestSealedUpload(t *testing.T) {
	helper, other := newIdentity(t), newIdentity(t)
	up, s := testSealed(t, helper)
	if bytes.Contains(s.Ciphertext, up.Key) {
		t.Fatal("the sealed share holds the key in the clear")
	}
	got, err := s.Open(hpkeKey(t, helper))
	if err != nil || !bytes.Equal(got, protocol.Encode(up)) {
		t.Fatalf("open: %x, %v; want the encoded upload", got, err)
	}
	if _, err := s.Open(hpkeKey(t, other)); !errors.Is(err, sealed.ErrUnsealable) {
		t.Errorf("opened with another key: %v", err)
	}
	for name, tamper := range map[string]func(*sealed.Upload){
		"report":     func(s *sealed.Upload) { s.Report[0] ^= 1 },
		"dataset":    func(s *sealed.Upload) { s.Dataset = "e" },
		"ciphertext": func(s *sealed.Upload) { s.Ciphertext[3] ^= 1 },
		"enc":        func(s *sealed.Upload) { s.Enc[3] ^= 1 },
	} {
		t.Run(name, func(t *testing.T) {
			_, s := testSealed(t, helper)
			tamper(s)
			if _, err := s.Open(hpkeKey(t, helper)); err == nil {
				t.Errorf("a sealed share with a changed %s opened", name)
			}
		})
	}
}

func TestRelayedReportParse(t *testing.T) {
	up, s := testSealed(t, newIdentity(t))
	mine := *up
	mine.Key = []byte("the leader's DCF key")
	rr := &sealed.RelayedReport{Leader: protocol.Encode(&mine), Helper: *s}
	got, err := sealed.ParseRelayedReport(rr.Marshal())
	if err != nil || !bytes.Equal(got.Leader, rr.Leader) || !bytes.Equal(got.Helper.Marshal(), s.Marshal()) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	mine.Report[0] ^= 1
	rr.Leader = protocol.Encode(&mine)
	if _, err := sealed.ParseRelayedReport(rr.Marshal()); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "the sealed one report") {
		t.Errorf("leader and sealed uploads of different reports: %v", err)
	}
	rr.Leader = protocol.Encode(&protocol.Ack{})
	if _, err := sealed.ParseRelayedReport(rr.Marshal()); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "not an upload") {
		t.Errorf("leader part not an upload: %v", err)
	}
	b := rr.Marshal()
	b[0] = 9
	if _, err := sealed.ParseRelayedReport(b); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("version 9: %v", err)
	}
}

func FuzzParseRelayedReport(f *testing.F) {
	up, s := testSealed(f, newIdentity(f))
	f.Add((&sealed.RelayedReport{Leader: protocol.Encode(up), Helper: *s}).Marshal())
	f.Add([]byte{sealed.RelayVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		rr, err := sealed.ParseRelayedReport(b)
		if err == nil && !bytes.Equal(rr.Marshal(), b) {
			t.Fatalf("relayed report re-encodes differently")
		}
	})
}

func FuzzParseSealedUpload(f *testing.F) {
	_, s := testSealed(f, newIdentity(f))
	f.Add(s.Marshal())
	f.Add([]byte{sealed.RelayVersion, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sealed.ParseUpload(b)
		if err == nil && !bytes.Equal(s.Marshal(), b) {
			t.Fatalf("sealed upload re-encodes differently")
		}
	})
}

// hpkeKey returns id's HPKE private key.
func hpkeKey(t testing.TB, id *manifest.Identity) kem.PrivateKey {
	t.Helper()
	sk, err := id.HPKEKey()
	if err != nil {
		t.Fatal(err)
	}
	return sk
}
