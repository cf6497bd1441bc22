package deploy

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// verifyKeyInfo is the HKDF info label of the verify key: it separates
// this use of the servers' X25519 keys from their use in HPKE. Version
// 2: the info binds the manifest's digests (keyedParts).
const verifyKeyInfo = "fedecdf verify key v2"

// keyedParts are the manifest parts (Digests) whose digests the verify
// key binds: what the servers verify reports under. Not bound, so that
// changing them keeps the store: the budget (a server may start on its
// store under another total, ServerConfig.AcceptBudgetChange), the
// policy (its neighbouring relation may change before the first
// release, checkStoreConfig; no verification depends on it), the
// analysts and the operators (who may read the releases).
var keyedParts = []string{"version", "dataset", "grid", "min_reports", "servers"}

// sharedVerifyKey derives the verify key the two servers of m share (the
// additive backend's Prio3 key, the dcf backend's challenge seed), at
// the server of role with identity id: HKDF-SHA256 over the X25519
// shared secret of the server's HPKE private key and the other server's
// HPKE public key in the manifest, with the label, the dataset, both
// peer IDs and the digests of m's keyedParts as info. Both servers
// compute the same key and nobody else can: a party or analyst holds
// only public keys, and no message carries it (server/doc.go, "The
// verification key"). Each deployment has its own key: another grid,
// backend or pair of servers derives another, and new server
// keys (fedecdf keygen) rotate it (ARCHITECTURE.md, "Rotating the
// verify key").
func sharedVerifyKey(m *manifest.Manifest, role server.Role, id *manifest.Identity) ([verify.KeySize]byte, error) {
	var key [verify.KeySize]byte
	peer := m.Helper.HPKEPublicKey
	if role == server.Helper {
		peer = m.Leader.HPKEPublicKey
	}
	sk, err := ecdh.X25519().NewPrivateKey(id.HPKEPrivate)
	if err != nil {
		return key, fmt.Errorf("the %s's HPKE private key: %w", role, err)
	}
	pk, err := ecdh.X25519().NewPublicKey(peer)
	if err != nil {
		return key, fmt.Errorf("manifest: the other server's HPKE public key: %w", err)
	}
	secret, err := sk.ECDH(pk)
	if err != nil {
		return key, fmt.Errorf("deriving the verify key: %w", err)
	}
	parts := []string{verifyKeyInfo, m.Dataset, m.Leader.PeerID, m.Helper.PeerID}
	for _, f := range m.Digests() {
		if slices.Contains(keyedParts, f.Name) {
			parts = append(parts, f.Name, string(f.Digest[:]))
		}
	}
	var info []byte
	for _, s := range parts {
		info = binary.BigEndian.AppendUint64(info, uint64(len(s)))
		info = append(info, s...)
	}
	out, err := hkdf.Key(sha256.New, secret, nil, string(info), verify.KeySize)
	if err != nil {
		return key, fmt.Errorf("deriving the verify key: %w", err)
	}
	copy(key[:], out)
	return key, nil
}
