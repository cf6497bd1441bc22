package manifest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/fedecdf/fedecdf/internal/protocol"
)

// manifestDigestVersion names the rules of Digests in every digest;
// changing the parts or their encoding bumps it (and
// TestManifestDigestKnownAnswer's hash).
const manifestDigestVersion = 2

// Digests returns the digest of each part of the manifest that the
// servers act on, which the leader and the helper exchange at first
// contact and before every release (server.Config.Manifest), refusing
// to serve while any differs. The parts, by name:
//
//	version      version, protocol
//	dataset      dataset, backend, upload, payload
//	uploads      the leader's and the helper's upload_addr (a helper
//	             on a manifest without sealed uploads and a leader whose
//	             parties upload sealed could never agree on a report);
//	             when either server lists more_upload_addrs, both
//	             servers' lists of addresses, upload_addr first
//	grid         scale, min, max, bins
//	policy       mechanism.neighbours, allowed, max_delta, max_epsilon
//	budget       budget.epsilon, budget.delta
//	min_reports  min_reports
//	servers      the leader's and the helper's public keys (peer ID,
//	             HPKE suite and key)
//	analysts     the analysts' peer IDs, in order
//	operators    the operators' peer IDs, in order (they may read
//	             report counts in status, even under add/remove)
//
// Each digest is SHA-256 of "fedecdf manifest digest v2", the part's
// name and its JSON encoding (encoding/json, the manifest's keys), each
// followed by a zero byte. Version 2 added the uploads part. The uploads
// part of a manifest without more_upload_addrs is encoded as before
// they existed (two strings), so its digest is unchanged; with them it
// is two lists of strings, which no encoding of two strings equals. Not
// digested: the servers' libp2p addresses (where they are reached from,
// which may differ between hosts' copies and shows as unreachable when
// wrong), and the analysts' release (the
// mechanism name, epsilon, delta and k the analyst commands ask for,
// which each server checks against the policy on every release).
func (m *Manifest) Digests() []protocol.ManifestField {
	type servers struct {
		Leader Public `json:"leader"`
		Helper Public `json:"helper"`
	}
	type policy struct {
		Neighbours string   `json:"neighbours"`
		Allowed    []string `json:"allowed"`
		MaxDelta   float64  `json:"max_delta"`
		MaxEpsilon float64  `json:"max_epsilon"`
	}
	parts := []struct {
		name  string
		value any
	}{
		{"version", [2]int{m.Version, m.Protocol}},
		{"dataset", [4]any{m.Dataset, m.Backend, m.Upload, m.Payload}},
		{"uploads", m.uploadsPart()},
		{"grid", m.Grid},
		{"policy", policy{m.Mechanism.Neighbours, m.Mechanism.Allowed, m.Mechanism.MaxDelta, m.Mechanism.MaxEpsilon}},
		{"budget", m.Budget},
		{"min_reports", m.MinReports},
		{"servers", servers{m.Leader.Public, m.Helper.Public}},
		{"analysts", m.Analysts},
		{"operators", m.Operators},
	}
	fields := make([]protocol.ManifestField, len(parts))
	for i, p := range parts {
		b, err := json.Marshal(p.value)
		if err != nil {
			panic(fmt.Sprintf("deploy: encoding manifest part %s: %v", p.name, err)) // plain values: cannot fail
		}
		h := sha256.New()
		fmt.Fprintf(h, "fedecdf manifest digest v%d\x00%s\x00", manifestDigestVersion, p.name)
		h.Write(b)
		h.Write([]byte{0})
		fields[i] = protocol.ManifestField{Name: p.name}
		h.Sum(fields[i].Digest[:0])
	}
	return fields
}

// DigestsByName is fields as server.Config.Manifest takes them.
func DigestsByName(fields []protocol.ManifestField) map[string][32]byte {
	m := make(map[string][32]byte, len(fields))
	for _, f := range fields {
		m[f.Name] = f.Digest
	}
	return m
}

// uploadsPart is the value of the uploads digest: the two servers'
// upload_addr, or their lists of upload addresses when either lists
// more than one.
func (m *Manifest) uploadsPart() any {
	if len(m.Leader.MoreUploadAddrs) == 0 && len(m.Helper.MoreUploadAddrs) == 0 {
		return [2]string{m.Leader.UploadAddr, m.Helper.UploadAddr}
	}
	return [2][]string{m.Leader.UploadAddrs(), m.Helper.UploadAddrs()}
}
