// Package manifest holds a deployment's manifest and its participants'
// identities.
//
// Identities. Each server and analyst has a key file (NewIdentity,
// WriteIdentity; mode 0600): an Ed25519 libp2p identity, whose peer ID
// the manifest pins, and an HPKE key pair (RFC 9180,
// X25519-HKDF-SHA256 / HKDF-SHA256 / AES-128-GCM, cloudflare/circl)
// whose public key the manifest publishes for uploads sealed to the
// server (package deploy, "Upload transport") and reports relayed
// through the leader.
//
// Manifest. One JSON file every participant holds (ManifestVersion; an
// older one is refused: regenerate it with fedecdf manifest): protocol
// version, both servers' peer IDs, multiaddrs, HPKE public keys and
// optional sealed-upload addresses (upload_addr, and more_upload_addrs
// for the further processes of a server run by several: package
// deploy), the
// analysts' peer IDs, the grid, the payload layout, the dataset's
// privacy policy (Mech: the neighbouring relation "neighbours", replace
// or addremove; the mechanisms "allowed"; the largest δ and ε of one
// release, "max_delta" with 0 for pure ε-DP only, and "max_epsilon"),
// the release the analyst commands ask for within it (mechanism name,
// ε and δ per release and component), the dataset's total budget, and
// the minimum number of reports before any release.
//
// The manifest's digests (Manifest.Digests) are what the leader and the
// helper compare at first contact: a server refuses a peer whose
// manifest gives the data another meaning.
package manifest
