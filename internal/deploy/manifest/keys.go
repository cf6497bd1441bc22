package manifest

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// HPKESuite is the HPKE suite of the servers' report keys (RFC 9180):
// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM.
var HPKESuite = hpke.NewSuite(hpke.KEM_X25519_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_AES128GCM)

// HPKESuiteName names HPKESuite in key files and manifests.
const HPKESuiteName = "X25519-HKDF-SHA256/HKDF-SHA256/AES-128-GCM"

// Identity is a server's or analyst's secret key file: its libp2p
// identity (Ed25519) and its HPKE key pair.
type Identity struct {
	Key           crypto.PrivKey
	PeerID        peer.ID
	HPKEPrivate   []byte
	HPKEPublicKey []byte
}

// Public is the part of an Identity that goes into the manifest.
type Public struct {
	PeerID        string `json:"peer_id"`
	HPKESuite     string `json:"hpke_suite"`
	HPKEPublicKey []byte `json:"hpke_public_key"` // base64 in JSON
}

type identityFile struct {
	Public
	Libp2pKey   []byte `json:"libp2p_private_key"`
	HPKEPrivate []byte `json:"hpke_private_key"`
}

// NewIdentity draws a fresh identity from crypto/rand.
func NewIdentity() (*Identity, error) {
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the libp2p key: %w", err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, err
	}
	pk, sk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().GenerateKeyPair()
	if err != nil {
		return nil, fmt.Errorf("generating the HPKE key pair: %w", err)
	}
	pkb, err := pk.MarshalBinary()
	if err != nil {
		return nil, err
	}
	skb, err := sk.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &Identity{Key: key, PeerID: id, HPKEPrivate: skb, HPKEPublicKey: pkb}, nil
}

// HPKEKey returns the identity's HPKE private key, its public key
// computed once (the KEM's decapsulation needs it), so that the key may
// open many sealed uploads at once.
func (id *Identity) HPKEKey() (kem.PrivateKey, error) {
	sk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPrivateKey(id.HPKEPrivate)
	if err != nil {
		return nil, fmt.Errorf("the HPKE private key: %w", err)
	}
	sk.Public()
	return sk, nil
}

// Public returns the identity's public part.
func (id *Identity) Public() Public {
	return Public{PeerID: id.PeerID.String(), HPKESuite: HPKESuiteName, HPKEPublicKey: id.HPKEPublicKey}
}

// WriteIdentity writes id to path (mode 0600) and its public part to
// path+".pub"; it refuses to overwrite either file.
func WriteIdentity(path string, id *Identity) error {
	raw, err := crypto.MarshalPrivateKey(id.Key)
	if err != nil {
		return err
	}
	if err := writeNewJSON(path, 0o600, identityFile{Public: id.Public(), Libp2pKey: raw, HPKEPrivate: id.HPKEPrivate}); err != nil {
		return err
	}
	return writeNewJSON(path+".pub", 0o644, id.Public())
}

func writeNewJSON(path string, mode os.FileMode, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// ReadIdentity reads a key file written by WriteIdentity, checking that
// the peer ID and HPKE public key match the private keys. A key file
// readable by others is refused.
func ReadIdentity(path string) (*Identity, error) {
	if path == "" {
		return nil, errors.New("no key file given")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %v: it must not be readable by group or others (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	var f identityFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	id, err := f.identity()
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return id, nil
}

func (f *identityFile) identity() (*Identity, error) {
	key, err := crypto.UnmarshalPrivateKey(f.Libp2pKey)
	if err != nil {
		return nil, fmt.Errorf("libp2p_private_key: %w", err)
	}
	if key.Type() != crypto.Ed25519 {
		return nil, fmt.Errorf("libp2p_private_key: %v key, want Ed25519", key.Type())
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if id.String() != f.PeerID {
		return nil, fmt.Errorf("peer_id %s does not match the private key (%s)", f.PeerID, id)
	}
	sk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPrivateKey(f.HPKEPrivate)
	if err != nil {
		return nil, fmt.Errorf("hpke_private_key: %w", err)
	}
	pk, err := sk.Public().MarshalBinary()
	if err != nil {
		return nil, err
	}
	if string(pk) != string(f.HPKEPublicKey) {
		return nil, errors.New("hpke_public_key does not match hpke_private_key")
	}
	return &Identity{Key: key, PeerID: id, HPKEPrivate: f.HPKEPrivate, HPKEPublicKey: pk}, nil
}

// ReadPublic reads a public key file (path.pub) or the public part of a
// key file.
func ReadPublic(path string) (Public, error) {
	var p Public
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("public key file: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("public key file %s: %w", path, err)
	}
	if err := p.check(); err != nil {
		return p, fmt.Errorf("public key file %s: %w", path, err)
	}
	return p, nil
}

func (p Public) check() error {
	if _, err := peer.Decode(p.PeerID); err != nil {
		return fmt.Errorf("peer_id %q: %w", p.PeerID, err)
	}
	if p.HPKESuite != HPKESuiteName {
		return fmt.Errorf("hpke_suite %q: want %q", p.HPKESuite, HPKESuiteName)
	}
	if _, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(p.HPKEPublicKey); err != nil {
		return fmt.Errorf("hpke_public_key: %w", err)
	}
	return nil
}
