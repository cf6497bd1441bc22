package sealed

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cloudflare/circl/kem"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// newIdentity returns a fresh server identity.
func newIdentity(t testing.TB) *manifest.Identity {
	t.Helper()
	id, err := manifest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func testSealed(t testing.TB, helper *manifest.Identity) (*protocol.Upload, *Upload) {
	up := &protocol.Upload{Dataset: "d", Report: payload.ReportID{4, 2}, Key: []byte("the helper's DCF key")}
	s, err := SealUpload(helper.HPKEPublicKey, up)
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
	if _, err := s.Open(hpkeKey(t, other)); !errors.Is(err, ErrUnsealable) {
		t.Errorf("opened with another key: %v", err)
	}
	for name, tamper := range map[string]func(*Upload){
		"report":     func(s *Upload) { s.Report[0] ^= 1 },
		"dataset":    func(s *Upload) { s.Dataset = "e" },
		"ciphertext": func(s *Upload) { s.Ciphertext[3] ^= 1 },
		"enc":        func(s *Upload) { s.Enc[3] ^= 1 },
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
	rr := &RelayedReport{Leader: protocol.Encode(&mine), Helper: *s}
	got, err := ParseRelayedReport(rr.Marshal())
	if err != nil || !bytes.Equal(got.Leader, rr.Leader) || !bytes.Equal(got.Helper.Marshal(), s.Marshal()) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	mine.Report[0] ^= 1
	rr.Leader = protocol.Encode(&mine)
	if _, err := ParseRelayedReport(rr.Marshal()); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "the sealed one report") {
		t.Errorf("leader and sealed uploads of different reports: %v", err)
	}
	rr.Leader = protocol.Encode(&protocol.Ack{})
	if _, err := ParseRelayedReport(rr.Marshal()); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "not an upload") {
		t.Errorf("leader part not an upload: %v", err)
	}
	b := rr.Marshal()
	b[0] = 9
	if _, err := ParseRelayedReport(b); !errors.Is(err, protocol.ErrMalformed) || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("version 9: %v", err)
	}
}

func FuzzParseRelayedReport(f *testing.F) {
	up, s := testSealed(f, newIdentity(f))
	f.Add((&RelayedReport{Leader: protocol.Encode(up), Helper: *s}).Marshal())
	f.Add([]byte{relayVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		rr, err := ParseRelayedReport(b)
		if err == nil && !bytes.Equal(rr.Marshal(), b) {
			t.Fatalf("relayed report re-encodes differently")
		}
	})
}

func FuzzParseSealedUpload(f *testing.F) {
	_, s := testSealed(f, newIdentity(f))
	f.Add(s.Marshal())
	f.Add([]byte{relayVersion, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseUpload(b)
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
