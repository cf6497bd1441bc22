// Package client uploads a party's records to a fedecdf deployment.
//
// A Party (NewParty) holds the manifest, its libp2p host when a server
// has no upload address, and its retry schedule; it makes each record a
// verified report and sends each server its share, directly or relayed
// through the leader, over libp2p or the sealed transport (package
// internal/deploy/sealed). The servers' side is package
// internal/deploy; see its documentation for the transport, the
// verification and the servers.
//
// Upload mode "direct": a party validates its record, draws a report ID
// and its verified report (the dcf backend: the field DCF keys of its bin
// and payload vector with correlated randomness, internal/vdcf; the
// additive backend: a Prio3 report, below), and sends each server its
// own share over a Noise channel to that server (or sealed to it:
// package deploy, "Upload transport"), to both at once; it is then free to go offline. The same
// encoded upload is resent on retries (each server's on its own, with
// backoff, for the transport's retry window), and servers drop
// duplicates by report ID, so a lost acknowledgement never counts a
// party twice; an upload that reached one server only fails with an
// UploadError naming it. A party's file of rows (SubmitRows) derives
// each row's report ID and keys from a secret row key, the row's values
// and its occurrence number j among identical rows (the j-th copy),
//
//	id = HMAC-SHA256(key, "fedecdf report id v2" ‖ dataset ‖ j ‖ row)[:16],
//
// never its position, so a rerun of the same multiset of rows, in any
// order, stores exactly the rows not yet stored; the row key's side file
// lists the IDs last stored, so a rerun counts the rows edited since.
//
// Upload mode "relay" (manifest "upload": "relay"): the party talks to
// the leader only, as an IETF DAP client. It sends the leader, over
// Noise (or in one frame sealed to the leader: package deploy, "Upload
// transport"),
// its own DCF key and the helper's upload sealed
// with HPKE (base mode, manifest.HPKESuite) to the helper's public key in
// the manifest; the dataset and report ID are the AEAD's associated
// data, so the leader can neither read the helper's key nor move it to
// another report. The leader stores its key, relays the sealed share to
// the helper (p2p.SealedProtocol, leader only), which opens and stores it,
// and acknowledges the party only when both have. Retries are safe as in
// direct mode: each server drops a duplicate report ID. When the leader
// stored its share but could not relay the other (sealed.ErrRelayFailed), the
// party retries through the leader within its retry window. The relay adds
// no trust in the leader for privacy (it sees one key, as in direct
// mode); it does let the leader drop a party's sealed share, which only
// removes that report from every release (both servers sum the agreed
// set).
package client
