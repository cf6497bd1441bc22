package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudflare/circl/hpke"

	"github.com/fedecdf/fedecdf/internal/deploy/client"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/deploy/sealed"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// newSealedDeployment starts a deployment of mode whose servers listen
// for sealed uploads (reading a frame for at most timeout) and whose
// manifest gives their upload addresses.
func newSealedDeployment(t *testing.T, mode string, timeout time.Duration) *deployment {
	t.Helper()
	d := newDeploymentTweaked(t, hugeEpsilon, 1, mode, "replace", func(c *ServerConfig) {
		c.UploadListen, c.UploadTimeout = "127.0.0.1:0", timeout
	})
	d.m.Leader.UploadAddr, d.m.Helper.UploadAddr = d.leader.uploadAddr(), d.helper.uploadAddr()
	if err := d.m.Check(); err != nil {
		t.Fatal(err)
	}
	return d
}

// counts returns the reports each server stored.
func (d *deployment) counts() [2]int {
	d.t.Helper()
	var n [2]int
	for k, s := range []*Server{d.leader, d.helper} {
		var err error
		if n[k], err = s.NumReports(); err != nil {
			d.t.Fatal(err)
		}
	}
	return n
}

// TestSealedUploads: over the sealed transport, in both upload modes,
// parties without a libp2p host upload reports both servers store and
// count exactly (ε = 2^48); a resent report is a duplicate.
func TestSealedUploads(t *testing.T) {
	for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
		t.Run(mode, func(t *testing.T) {
			const n = 20
			d := newSealedDeployment(t, mode, time.Minute)
			p := d.newParty()
			if p.Host() != nil {
				t.Fatal("a party of a manifest with upload addresses started a libp2p host")
			}
			inst := instances(n, 7)
			sendThenResend(t, p, inst)
			if got := d.counts(); got != [2]int{n, n} {
				t.Fatalf("stored %v reports, want %d at each server", got, n)
			}
			checkExact(t, d.query(), plainCounts(t, d.m, inst))
		})
	}
}

// exchange sends frame to addr on a new connection and returns the
// answer's kind and body, or the error reading it.
func exchange(t *testing.T, addr string, frame []byte) (byte, []byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write(frame); err != nil {
		return 0, nil, err
	}
	return sealed.ReadFrame(c, sealed.MaxAnswerLen, sealed.FrameAck, sealed.FrameRefusal)
}

// frameOf seals report r's upload to the leader (or, in relay mode, r
// relayed through it) as the party would, then lets change alter the
// sealed upload before the frame is encoded.
func frameOf(t *testing.T, d *deployment, to manifest.Endpoint, r *client.Report, kind byte, change func(*sealed.Upload)) *client.SealedCall {
	t.Helper()
	pt := protocol.Encode(r.Leader)
	if kind == sealed.FrameRelayed {
		su, err := sealed.SealUpload(d.m.Helper.HPKEPublicKey, r.Helper)
		if err != nil {
			t.Fatal(err)
		}
		pt = (&sealed.RelayedReport{Leader: pt, Helper: *su}).Marshal()
	}
	s, key, err := sealed.Seal(strings.NewReader(strings.Repeat("k", 64)), to.HPKEPublicKey, sealed.Info[kind], d.m.Dataset, r.ID, pt)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(s)
	}
	var f bytes.Buffer
	if err := sealed.WriteFrame(&f, kind, sealedWriter(s)); err != nil {
		t.Fatal(err)
	}
	return &client.SealedCall{To: manifest.LeaderName, Addrs: d.m.Leader.UploadAddrs(), Frame: f.Bytes(), AckKey: key}
}

// sealedWriter is the body of a request frame holding s.
func sealedWriter(s *sealed.Upload) []byte { return s.Marshal()[1:] }

// TestSealedFramesAdversary: a network attacker's or malicious party's
// frames, in both upload modes: a tampered ciphertext, associated data
// (another dataset or report ID) or encapsulated key, a frame sealed to
// the other server's key, or labelled another kind, is refused unopened
// and nothing is stored; a replayed frame is stored once (the replay is
// a duplicate, acknowledged as such).
func TestSealedFramesAdversary(t *testing.T) {
	for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
		t.Run(mode, func(t *testing.T) {
			d := newSealedDeployment(t, mode, time.Minute)
			p := d.newParty()
			kind, otherKind := sealed.FrameUpload, sealed.FrameRelayed
			if mode == manifest.UploadRelay {
				kind, otherKind = sealed.FrameRelayed, sealed.FrameUpload
			}
			for _, c := range []struct {
				name   string
				to     manifest.Endpoint
				kind   byte
				change func(*sealed.Upload)
			}{
				{"ciphertext", d.m.Leader, kind, func(s *sealed.Upload) { s.Ciphertext[5] ^= 1 }},
				{"report ID", d.m.Leader, kind, func(s *sealed.Upload) { s.Report[0] ^= 1 }},
				{"dataset", d.m.Leader, kind, func(s *sealed.Upload) { s.Dataset = "other" }},
				{"encapsulated key", d.m.Leader, kind, func(s *sealed.Upload) { s.Enc[0] ^= 1 }},
				{"sealed to the helper", d.m.Helper, kind, nil},
				{"other kind", d.m.Leader, otherKind, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					r, err := p.NewReport(instances(1, 8)[0])
					if err != nil {
						t.Fatal(err)
					}
					before := d.counts()
					f := frameOf(t, d, c.to, r, c.kind, c.change)
					if c.name == "other kind" {
						f.Frame[1] = kind
					}
					got, body, err := exchange(t, d.m.Leader.UploadAddr, f.Frame)
					if err != nil || got != sealed.FrameRefusal {
						t.Fatalf("answer kind %d (%s), %v; want a refusal", got, body, err)
					}
					if after := d.counts(); after != before {
						t.Fatalf("stored %v reports after the frame, %v before", after, before)
					}
				})
			}
			t.Run("replay", func(t *testing.T) {
				r, err := p.NewReport(instances(1, 9)[0])
				if err != nil {
					t.Fatal(err)
				}
				before := d.counts()
				f := frameOf(t, d, d.m.Leader, r, kind, nil)
				for k, wantDup := range []bool{false, true, true} {
					ack, err := p.CallSealed(context.Background(), f)
					if err != nil || ack.Duplicate != wantDup {
						t.Fatalf("sending %d: %+v, %v; want duplicate=%v", k+1, ack, err, wantDup)
					}
				}
				want := [2]int{before[0] + 1, before[1]}
				if mode == manifest.UploadRelay {
					want[1]++
				}
				if after := d.counts(); after != want {
					t.Fatalf("stored %v after the frame and two replays, want %v", after, want)
				}
			})
		})
	}
}

// ackProxy relays sealed uploads to the leader and alters the first
// `times` answers with alter.
type ackProxy struct {
	ln    net.Listener
	to    string
	alter func(kind byte, body []byte) (byte, []byte)
	times int
}

func startAckProxy(t *testing.T, to string, times int, alter func(byte, []byte) (byte, []byte)) *ackProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &ackProxy{ln: ln, to: to, alter: alter, times: times}
	t.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

func (p *ackProxy) serve() {
	for n := 0; ; n++ {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		kind, body, err := sealed.ReadFrame(c, 1<<20, sealed.FrameUpload, sealed.FrameRelayed)
		if err == nil {
			var ak byte
			var ab []byte
			if ak, ab, err = exchangeRaw(p.to, kind, body); err == nil {
				if n < p.times {
					ak, ab = p.alter(ak, ab)
				}
				sealed.WriteFrame(c, ak, ab)
			}
		}
		c.Close()
	}
}

// exchangeRaw forwards one frame to addr and returns the answer.
func exchangeRaw(addr string, kind byte, body []byte) (byte, []byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, nil, err
	}
	defer c.Close()
	if err := sealed.WriteFrame(c, kind, body); err != nil {
		return 0, nil, err
	}
	return sealed.ReadFrame(c, sealed.MaxAnswerLen, sealed.FrameAck, sealed.FrameRefusal)
}

// flipDuplicate flips the duplicate flag of an answer's Ack (the last
// byte of the response before the MAC).
func flipDuplicate(kind byte, b []byte) (byte, []byte) {
	b[len(b)-sealed.AckKeyLen-1] ^= 1
	return kind, b
}

// TestSealedForgedAck: a network attacker between a party and the
// leader who alters the answer (flips the duplicate flag or a byte of
// the MAC, replaces an acknowledgement by a forged one, or by an
// unauthenticated refusal) never makes the party report success on a
// forged answer, in either upload mode: it retries and gets the true
// answer, or fails.
func TestSealedForgedAck(t *testing.T) {
	forged := protocol.Encode(&protocol.Ack{})
	refuse := func(byte, []byte) (byte, []byte) { return sealed.FrameRefusal, []byte("leader: no") }
	var unopened *client.UnopenedError
	for _, mode := range []string{manifest.UploadDirect, manifest.UploadRelay} {
		for _, c := range []struct {
			name  string
			times int // answers altered; the later ones pass
			alter func(byte, []byte) (byte, []byte)
			want  func(error) bool // nil: the upload succeeds after retrying
		}{
			{"flip the duplicate flag always", 1 << 30, flipDuplicate, func(err error) bool { return errors.Is(err, client.ErrForgedAck) }},
			{"alter the MAC always", 1 << 30, func(k byte, b []byte) (byte, []byte) { b[len(b)-1] ^= 1; return k, b }, func(err error) bool { return errors.Is(err, client.ErrForgedAck) }},
			{"forge an ack always", 1 << 30, func(byte, []byte) (byte, []byte) {
				return sealed.FrameAck, sealed.AnswerBody(make([]byte, sealed.AckKeyLen), forged)
			}, func(err error) bool { return errors.Is(err, client.ErrForgedAck) }},
			{"refuse unopened always", 1 << 30, refuse, func(err error) bool { return errors.As(err, &unopened) }},
			{"flip the duplicate flag once", 1, flipDuplicate, nil},
		} {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				d := newSealedDeployment(t, mode, time.Minute)
				proxy := startAckProxy(t, d.m.Leader.UploadAddr, c.times, c.alter)
				view := *d.m
				view.Leader.UploadAddr = proxy.ln.Addr().String()
				p, err := client.NewParty(&view, nil, fast)
				if err != nil {
					t.Fatal(err)
				}
				r, err := p.NewReport(instances(1, 10)[0])
				if err != nil {
					t.Fatal(err)
				}
				dup, err := p.Send(context.Background(), r)
				var ue *client.UploadError
				switch {
				case c.want != nil && (!c.want(err) || (mode == manifest.UploadDirect && (!errors.As(err, &ue) || ue.Held != client.HeldByHelper))):
					t.Fatalf("altered answers: duplicate=%v, %v; want the leader's upload failed (the helper's held in direct mode)", dup, err)
				case c.want == nil && err != nil:
					t.Fatalf("one altered answer, then true ones: %v", err)
				case c.want == nil && !dup:
					t.Fatal("the retry after an altered answer reported a new report: the first attempt stored it, so the true answer is duplicate")
				}
				if got := d.counts(); got != [2]int{1, 1} {
					t.Fatalf("stored %v reports, want 1 at each server (the attacker altered answers only)", got)
				}
			})
		}
	}
}

// TestSealedListenerRobust: a client that sends nothing is dropped at
// the timeout, and a malformed or oversized frame closes its connection
// unanswered, while other parties upload as usual.
func TestSealedListenerRobust(t *testing.T) {
	d := newSealedDeployment(t, manifest.UploadDirect, 200*time.Millisecond)
	addr := d.m.Leader.UploadAddr
	limit := d.leader.uploads.maxFrame
	for _, c := range []struct {
		name string
		send []byte
	}{
		{"slow client", nil},
		{"bad version", []byte{9, sealed.FrameUpload, 0, 0, 0, 1, 0}},
		{"answer kind", []byte{sealed.FrameVersion, sealed.FrameAck, 0, 0, 0, 0}},
		{"oversized", binary.BigEndian.AppendUint32([]byte{sealed.FrameVersion, sealed.FrameUpload}, uint32(limit+1))},
		{"truncated", []byte{sealed.FrameVersion, sealed.FrameUpload, 0, 0, 1, 0, 1, 2}},
		{"garbage body", []byte{sealed.FrameVersion, sealed.FrameUpload, 0, 0, 0, 3, 1, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(c.send); err != nil {
				t.Fatal(err)
			}
			// Another party uploads while this connection is open.
			if _, err := d.newParty().Submit(context.Background(), instances(1, 11)[0]); err != nil {
				t.Fatalf("an upload next to a %s: %v", c.name, err)
			}
			conn.SetReadDeadline(time.Now().Add(time.Minute))
			b, err := io.ReadAll(conn)
			if c.name == "garbage body" {
				// A whole frame that does not parse is refused with the reason.
				if err != nil || len(b) < sealed.HeaderLen || b[1] != sealed.FrameRefusal {
					t.Fatalf("garbage body: answer %q, %v; want a refusal", b, err)
				}
				return
			}
			if len(b) != 0 || (err != nil && !errors.Is(err, syscall.ECONNRESET)) {
				t.Fatalf("read %q, %v; want the server to close the connection unanswered", b, err)
			}
		})
	}
}

// TestSealedFrameLimit: the frame limit is derived from the manifest's
// uploads: the larger upload of every report has the size maxUploadSize gives, and
// a relayed report's frame fits the limit.
func TestSealedFrameLimit(t *testing.T) {
	d := newSealedDeployment(t, manifest.UploadRelay, time.Minute)
	size, err := client.MaxUploadSize(d.m)
	if err != nil {
		t.Fatal(err)
	}
	p := d.newParty()
	for k, x := range client.DemoInstances(20, 3) {
		r, err := p.NewReport(x)
		if err != nil {
			t.Fatal(err)
		}
		// The two servers' uploads differ by at most one field element
		// (vdcf's explicit shares alternate); the larger has the size.
		if n := max(len(protocol.Encode(r.Leader)), len(protocol.Encode(r.Helper))); n != size {
			t.Fatalf("instance %d: upload of %d bytes, maxUploadSize %d", k, n, size)
		}
		if f := frameOf(t, d, d.m.Leader, r, sealed.FrameRelayed, nil); len(f.Frame)-sealed.HeaderLen > sealed.MaxFrame(size) {
			t.Fatalf("a relayed frame of %d bytes exceeds the limit %d", len(f.Frame), sealed.MaxFrame(size))
		}
	}
}

// TestSealedFrameKnownAnswer pins the sealed transport's wire format:
// a frame sealed with a fixed ephemeral key to a fixed server key, and
// the answer to it. Changing either is a versioned change (bump
// sealed.FrameVersion and update the hashes). Both carry a protocol
// message, whose first byte is protocol.Version: a bump of it changes
// the hashes too.
func TestSealedFrameKnownAnswer(t *testing.T) {
	pk, sk := hpke.KEM_X25519_HKDF_SHA256.Scheme().DeriveKeyPair(bytes.Repeat([]byte{7}, 32))
	pub, _ := pk.MarshalBinary()
	up := &protocol.Upload{Dataset: "kat", Report: payload.ReportID{1, 2, 3}, Share: []byte("share")}
	e := manifest.Endpoint{Public: manifest.Public{HPKEPublicKey: pub}, UploadAddr: "127.0.0.1:1"}
	c, err := client.NewSealedCall(bytes.NewReader(bytes.Repeat([]byte{9}, 64)), e, manifest.LeaderName, sealed.FrameUpload, up.Report, up.Dataset, protocol.Encode(up))
	if err != nil {
		t.Fatal(err)
	}
	answer := sealed.AnswerBody(c.AckKey, protocol.Encode(&protocol.Ack{Duplicate: true}))
	for _, k := range []struct {
		name string
		b    []byte
		want string
	}{
		{"frame", c.Frame, "5977c1ed5f621dbd45aaea321646415f84b8928eea3589b0bb6f746cdf3b5cdc"},
		{"answer", answer, "5c0385de63ef9659e68bf0506345e92ebb01d9564be88965658f81b1a622521d"},
	} {
		sum := sha256.Sum256(k.b)
		if got := hex.EncodeToString(sum[:]); got != k.want {
			t.Errorf("%s: SHA-256 %s, want %s (%x)", k.name, got, k.want, k.b)
		}
	}
	kind, body, err := sealed.ReadFrame(bytes.NewReader(c.Frame), 1<<20, sealed.FrameUpload)
	if err != nil || kind != sealed.FrameUpload {
		t.Fatal(kind, err)
	}
	s, err := sealed.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	pt, key, err := s.OpenWith(sk, sealed.Info[sealed.FrameUpload])
	if err != nil || !bytes.Equal(pt, protocol.Encode(up)) || !bytes.Equal(key, c.AckKey) {
		t.Fatalf("open: %x, %v; key %x, want %x", pt, err, key, c.AckKey)
	}
}

// FuzzSealedFrame: the server's frame decoder never panics, and a
// frame it accepts re-encodes to the same bytes.
func FuzzSealedFrame(f *testing.F) {
	id := newIdentity(f)
	up := &protocol.Upload{Dataset: "d", Report: payload.ReportID{4, 2}, Share: []byte("share")}
	e := manifest.Endpoint{Public: id.Public(), UploadAddr: "127.0.0.1:1"}
	c, err := client.NewSealedCall(bytes.NewReader(bytes.Repeat([]byte{1}, 64)), e, manifest.LeaderName, sealed.FrameUpload, up.Report, up.Dataset, protocol.Encode(up))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c.Frame)
	f.Add([]byte{sealed.FrameVersion, sealed.FrameRelayed, 0, 0, 0, 0})
	f.Add([]byte{sealed.FrameVersion, sealed.FrameUpload, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, body, err := sealed.ReadFrame(bytes.NewReader(b), 1<<16, sealed.FrameUpload, sealed.FrameRelayed)
		if err != nil {
			return
		}
		s, err := sealed.ParseRequest(body)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := sealed.WriteFrame(&out, kind, sealedWriter(s)); err != nil || !bytes.Equal(out.Bytes(), b[:out.Len()]) {
			t.Fatalf("frame re-encodes as %x, was %x", out.Bytes(), b)
		}
	})
}

// TestSealedServerDown: an upload to a server not listening fails after
// the retries with an error naming the server and its address, a
// *client.DialError for the command line to say what to do; it never succeeds.
func TestSealedServerDown(t *testing.T) {
	d := newSealedDeployment(t, manifest.UploadDirect, time.Minute)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	view := *d.m
	view.Helper.UploadAddr = ln.Addr().String()
	ln.Close() // nobody listens there now
	p, err := client.NewParty(&view, nil, fast)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Submit(context.Background(), instances(1, 12)[0])
	var ue *client.UploadError
	var dial *client.DialError
	if !errors.As(err, &ue) || ue.Held != client.HeldByLeader || !strings.Contains(err.Error(), "sealed upload to the helper at "+view.Helper.UploadAddr) || !errors.As(err, &dial) || dial.Server != manifest.HelperName {
		t.Fatalf("upload to a helper not listening: %v, want an *client.UploadError held by the leader with a *client.DialError of the helper", err)
	}
}

// TestSealedConnectionCap: with UploadConns 1, a client holding the one
// place and sending nothing makes the next connection close at once
// during its first second (uploadGrace, on the listener's clock), and is
// closed to make room for the next one after it: that upload is
// answered and stored, and the idle client sees its connection closed.
func TestSealedConnectionCap(t *testing.T) {
	d := newDeploymentTweaked(t, hugeEpsilon, 1, manifest.UploadDirect, "replace", func(c *ServerConfig) {
		c.UploadListen, c.UploadTimeout, c.UploadConns = "127.0.0.1:0", time.Minute, 1
		c.UploadLimits.HeaderTimeout = time.Minute
	})
	d.m.Leader.UploadAddr, d.m.Helper.UploadAddr = d.leader.uploadAddr(), d.helper.uploadAddr()
	adm := d.leader.uploads.adm
	clock := time.Now()
	adm.mu.Lock()
	adm.now = func() time.Time { return clock } // read under adm.mu
	adm.mu.Unlock()
	slow, err := net.Dial("tcp", d.m.Leader.UploadAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	for adm.numWaiting() == 0 { // until the leader admits it
		time.Sleep(time.Millisecond)
	}
	r, err := d.newParty().NewReport(instances(1, 13)[0])
	if err != nil {
		t.Fatal(err)
	}
	f := frameOf(t, d, d.m.Leader, r, sealed.FrameUpload, nil)
	if kind, _, err := exchange(t, d.m.Leader.UploadAddr, f.Frame); err == nil {
		t.Fatalf("an upload while the one place is young: answered (kind %d), want closed at once", kind)
	}
	adm.mu.Lock()
	clock = clock.Add(uploadGrace)
	adm.mu.Unlock()
	if kind, body, err := exchange(t, d.m.Leader.UploadAddr, f.Frame); err != nil || kind != sealed.FrameAck {
		t.Fatalf("upload once the idle client waited a second: kind %d (%s), %v", kind, body, err)
	}
	slow.SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := slow.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("the idle connection read (%d, %v), want it closed to make room", n, err)
	}
	if got, shed := d.counts(), d.leader.uploads.shed.Load(); got[0] != 1 || shed != 2 {
		t.Fatalf("the leader stored %d reports and shed %d connections, want 1 and 2", got[0], shed)
	}
}
