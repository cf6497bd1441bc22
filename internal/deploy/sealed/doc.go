// Package sealed is the wire format of uploads sealed with HPKE to one server.
//
// Both sides use it: a party (package internal/deploy/client) seals, a
// server (package internal/deploy) opens. An Upload is a report's
// encoded protocol.Upload sealed with HPKE base mode (manifest.HPKESuite)
// to a server's public key in the manifest, its dataset and report ID
// in the clear and the AEAD's associated data, so whoever carries it can
// neither read it nor move it to another report:
//
//	Upload        = version ‖ dataset ‖ report ID ‖ enc ‖ ciphertext
//	RelayedReport = version ‖ leader's encoded upload ‖ helper's Upload without its version
//
// In relay mode the leader forwards the helper's Upload (SealUpload,
// Open); the sealed transport carries one frame per connection,
//
//	frame = FrameVersion ‖ kind ‖ uint32 length ‖ body,
//
// a request (FrameUpload, FrameRelayed: an Upload without its version
// byte, sealed under the kind's Info string) answered by FrameAck (the
// protocol response and AckMAC, an HMAC-SHA256 keyed by the HPKE
// context's exported secret, which only the sealing party and the
// opening server hold) or FrameRefusal (why the frame did not open,
// unauthenticated). Changing a layout, an info string or the MAC bumps
// FrameVersion or the uploads' version byte (TestSealedFrameKnownAnswer in package
// deploy).
package sealed
