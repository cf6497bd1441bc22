package server

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
	"github.com/fedecdf/fedecdf/party"
)

// capturedUploads returns the encoded uploads an honest party of
// backend b sends each server (leader's first), captured on their way.
func capturedUploads(t *testing.T, b Backend, score float64) [2][]byte {
	t.Helper()
	var got [2][]byte
	net := transport.NewNetwork()
	for k, name := range []transport.PeerID{"leader", "helper"} {
		net.Register(name, func(_ context.Context, _ transport.PeerID, req []byte) []byte {
			got[k] = bytes.Clone(req)
			return protocol.Encode(&protocol.Ack{})
		})
	}
	q := newParty(t, score)
	upload := q.UploadVerified
	if b == DCF {
		upload = q.UploadVerifiedKeys
	}
	if err := upload(context.Background(), party.Servers{Conn: net.Conn("party"), Leader: "leader", Helper: "helper", Dataset: "d"}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestUploadCheckerAgreesWithServer: an UploadChecker accepts exactly
// the uploads a server of the same role and dataset acknowledges, for
// an honest upload and its malformed variants (each under a report ID
// of its own: a server acknowledges a held ID as a duplicate before
// checking its share), for both verified backends and both roles.
func TestUploadCheckerAgreesWithServer(t *testing.T) {
	variants := []struct {
		name string
		edit func(m *protocol.Upload)
		raw  []byte // sent instead of the upload when set
	}{
		{"honest", func(*protocol.Upload) {}, nil},
		{"truncated share", func(m *protocol.Upload) { m.Share = m.Share[:len(m.Share)/2] }, nil},
		{"empty share", func(m *protocol.Upload) { m.Share = nil }, nil},
		{"a bare key too", func(m *protocol.Upload) { m.Key = []byte{1, 2, 3} }, nil},
		{"truncated public share", func(m *protocol.Upload) {
			if len(m.Public) > 0 {
				m.Public = m.Public[:len(m.Public)/2]
			} else {
				m.Public = []byte{1}
			}
		}, nil},
		{"another dataset", func(m *protocol.Upload) { m.Dataset = "other" }, nil},
		{"not an upload", nil, protocol.Encode(&protocol.Ack{})},
		{"garbage", nil, []byte{protocol.Version, 0xff, 1, 2}},
	}
	for _, b := range verifiedBackends {
		p := newVerifiedPair(t, b)
		honest := capturedUploads(t, b, 0.4)
		for k, srv := range []*Server{p.leader, p.helper} {
			c, err := NewUploadChecker(srv.datasets["d"].Dataset, srv.cfg.Role, testVerifyKey)
			if err != nil {
				t.Fatal(err)
			}
			accepted, rejected := 0, 0
			for j, v := range variants {
				t.Run(fmt.Sprintf("%s/%s/%s", b, srv.cfg.Role, v.name), func(t *testing.T) {
					req := v.raw
					if req == nil {
						msg, err := protocol.Decode(honest[k])
						if err != nil {
							t.Fatal(err)
						}
						m := *msg.(*protocol.Upload)
						m.Report[0] ^= byte(j + 1)
						v.edit(&m)
						req = protocol.Encode(&m)
					}
					checkErr := c.Check(req)
					resp, err := protocol.Decode(srv.Handle(context.Background(), "party", req))
					if err != nil {
						t.Fatal(err)
					}
					_, acked := resp.(*protocol.Ack)
					if acked != (checkErr == nil) {
						t.Fatalf("the server answers %s, the checker %v", describeResp(resp), checkErr)
					}
					if acked {
						accepted++
					} else {
						rejected++
					}
				})
			}
			if accepted != 1 || rejected != len(variants)-1 {
				t.Errorf("%s %s: %d variants accepted, %d rejected; want the honest one only", b, srv.cfg.Role, accepted, rejected)
			}
		}
	}
}

// describeResp names a server's answer for a test's message.
func describeResp(m protocol.Message) string {
	if e, ok := m.(*protocol.Error); ok {
		return "an error: " + e.Text
	}
	return fmt.Sprintf("%T", m)
}

// TestUploadCheckerNeedsKey: a verified dataset's checker needs the
// verify key, as its server does.
func TestUploadCheckerNeedsKey(t *testing.T) {
	d := Dataset{Name: "d", Backend: DCF, Bins: bins}
	if _, err := NewUploadChecker(d, Leader, [32]byte{}); err == nil {
		t.Error("a verified dataset's checker without a verify key")
	}
	d.Unverified = true
	if _, err := NewUploadChecker(d, Leader, [32]byte{}); err != nil {
		t.Errorf("an unverified dcf dataset's checker: %v", err)
	}
}
