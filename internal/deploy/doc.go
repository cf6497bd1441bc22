// Package deploy runs a fedecdf server process, leader or helper, across machines.
//
// It wires the server logic onto libp2p hosts (internal/p2p) and the
// sealed-upload listener (sealed_server.go; the frames are package
// internal/deploy/sealed) with a durable store (internal/store), under
// the manifest and identities of package internal/deploy/manifest. A
// party's side (direct and relayed uploads, files of rows, load and
// forgeries) is package internal/deploy/client; the analyst's side is
// package internal/deploy/analyst. See ARCHITECTURE.md, "Data flow".
//
// The servers own the privacy contract: each builds its server.Dataset
// from the manifest, so the relation, the mechanisms allowed, the δ
// policy and the budget are the servers' configuration, and each refuses
// on its own, before charging anything, a release that asks for another
// relation, a mechanism not allowed, or an ε or δ beyond the policy
// (server.ErrPolicy), whoever sends it: an analyst with a modified
// client, or a corrupt leader forwarding to the helper. An analyst
// chooses only ε and δ within the policy, and which components and
// prefixes to read.
//
// Upload transport (the parties' side and the upload modes: package
// internal/deploy/client; the frames: internal/deploy/sealed). Over libp2p (the default when the manifest gives a
// server no "upload_addr"), each party's upload costs each server a
// Noise XX handshake, identify and yamux: a mutually authenticated
// session a party does not need. A server whose manifest entry has an
// upload_addr (HOST:PORT; fedecdf manifest --leader-upload,
// --helper-upload) also listens there for sealed uploads, as an IETF
// DAP server does (sealed_server.go): the party opens one plain TCP connection
// per upload and sends one frame (version 1, kind,
// length; then the dataset, the report ID, the HPKE encapsulated key and
// the ciphertext), its upload sealed with HPKE base mode (the suite
// above; an info string per kind: an upload, or a relayed report to the
// leader in relay mode) to that server's public key in the manifest, the
// dataset and report ID the AEAD's associated data. The server opens it
// with its private key (one X25519 product), handles the upload exactly
// as one over libp2p (group commit; acknowledged only after the fsync
// covering it; a report ID it holds is a duplicate), and answers with
// the protocol response (Ack, or Error with the reason) and an
// HMAC-SHA256 over it keyed by the HPKE context's exported secret, which
// only the party that sealed the frame and the server that opened it
// hold. So a network attacker reads no upload, cannot move one to
// another report or server (the frame does not open: it is refused
// unanswered by a MAC, which the party does not trust as success), and
// cannot forge or alter an acknowledgement: the party checks the MAC
// (client.ErrForgedAck) and sends the same frame again, which the server
// acknowledges as a duplicate if it stored it. A replayed frame is a
// duplicate. The server reads a frame of at most twice its manifest's
// upload size plus 2 KiB (a relayed report holds two uploads) within
// ServerConfig.UploadTimeout (its header within
// UploadLimits.HeaderTimeout), writes the answer within it, and admits
// connections per client address (UploadLimits, admission.go): a
// client's connections beyond its rate are closed at once, and when its
// address, or the listener, has too many waiting for their frame the
// oldest one a second old makes room; a malformed frame closes its
// connection only, and its warning is rate-limited per address
// (connLog). The party needs no libp2p host when every server it
// uploads to has an upload address. The sealed transport authenticates
// the server to the party but not the party, as libp2p's fresh party
// keys did not either; the leader–helper link stays libp2p.
//
// Verified reports, both backends. A party's upload is its verified
// report: for "backend": "additive", party.VerifiedReport (a
// Prio3Histogram of its bin and label, the public share and one input
// share per server, its report ID as the nonce); for "dcf", the default,
// party.VerifiedKeys with the probability (vdcf.NewWithProbability: one
// field DCF key per server and the correlated randomness the servers
// check it with). Either goes in either upload mode; a row of a file
// derives its randomness from the row key. A manifest of version 2,
// whose dcf parties uploaded bare Z_2^64 DCF keys, is refused, and so is
// a store holding such a key (ErrUnverifiedStore). The leader
// verifies the reports both servers hold with the helper (Prepare,
// Prepared, Decide over the peer protocol) every PeerCheck and before
// every release; each server verifies a report only once its upload is
// durable, saves its verdicts in its store before acting on them, and on
// restart re-derives the accepted reports' output shares from the
// replayed uploads, in parallel, and deletes the rejected ones' uploads
// from its store (server/doc.go). Rejections are logged at WARN and
// shown per reason in fedecdf status (ServerStatus.Rejected). The two
// servers' verify key is sharedVerifyKey: HKDF-SHA256 over the X25519 shared
// secret of one server's HPKE private key and the other's public key in
// the manifest (a static–static Diffie–Hellman, domain-separated from
// HPKE by its label), with the dataset, both peer IDs and the digests of
// the manifest parts the servers verify and release under (keyedParts:
// each deployment its own key); only the two
// servers can compute it, and no message carries it. Each store records
// it (CheckVerifyKey) and a server whose key file changed under it
// refuses to start (store.ErrVerifyKeyChanged). client.SubmitForgeries sends
// invalid reports of every kind (fedecdf demo --malicious).
//
// Servers. A server accepts a report only after writing it to its bbolt
// store (reports arriving together share one transaction and fsync:
// store's group commit), charges releases to a ledger in the same store and records each
// release's noise seed, mechanism and agreed report set there before
// acknowledging it; on restart it restores the releases and replays the
// stored reports into a fresh server.Server, so an old release answers
// with its original noise (Analyst.ReadRelease, fedecdf query --release)
// and is never charged twice. Every answer carries the mechanism the
// servers recorded for the release, so a re-read states its own
// guarantee whatever the manifest says now. A release retried after a
// leader crash is answered from the helper's record (same report set,
// same noise) and charged at most once at each server; the leader, too,
// answers a retried release from its record, and completes or aborts a
// pending one (server/doc.go, "Release creation").
//
// The two servers run one manifest. The leader exchanges the manifest's
// digests (Manifest.Digests) with the helper when it starts, every
// ServerConfig.PeerCheck and before every release: it does not start if
// they differ, and both refuse to serve while they do, naming the parts
// that differ; each time the helper agrees, the leader resolves its
// pending releases. The store remembers the total budget its ledger is
// kept under: once it has charged a release, a manifest with another one
// is refused (ErrBudgetChanged) unless ServerConfig.AcceptBudgetChange,
// which logs the change at WARN.
// The manifest's server addresses must be dialable (an IP address or DNS
// name and a TCP port; not 0.0.0.0, which a server may listen on).
//
// The store file (mode 0600) holds the
// server's secret seeds: anyone who reads it can strip that server's
// noise from its releases, so it must stay private to the server, as
// its key file. The leader
// answers the manifest's analysts only (QueryProtocol; its operators
// status only), the helper the
// leader only (PeerProtocol); reports (ReportProtocol) are accepted from
// any peer and may carry only uploads.
//
// A call of the leader to the helper (a release, a query, a status)
// that cannot open a connection within the transport's connect timeout
// is not retried: the analyst is told at once that the helper is not
// answering (stopped, hung or unreachable); a refused connection is
// retried Attempts times, quickly.
//
// Operations. Each server logs one line per event (NewLogger: text or
// JSON; uploads at DEBUG, a summary of each interval with activity at
// INFO, refusals at WARN with the reason, failures at ERROR) and keeps
// its last warnings and errors. A periodic check that fails check after
// check (the leader's verification of the reports held, refused while
// a report is; the database, the reading of the reports other
// processes recorded, their preparation) is warned about when it
// starts failing and when its error changes, then at most once per
// ServerConfig.Summary with the number of checks failed since, and its
// recovery logged once at INFO. The leader checks every
// ServerConfig.PeerCheck that it reaches the helper, within PeerTimeout,
// sending the size and digest of its report set; when the sets differ
// (at most every OrphanCheck), and for every AskStatus, it sends
// every report ID (those it holds undecided or has decided), and the
// helper answers with the leader's IDs it does not know: each server
// then knows the reports it holds undecided that the other does not
// know (server.Server.ReportIDs; a report decided at both, accepted or
// rejected, never is one). These "orphans" are never in a release
// (releases sum the reports both accepted);
// they are logged, counted by status and the metrics endpoint
// (ServerConfig.Metrics, Prometheus text format), and with PurgeAfter
// removed at that server once older than it (server.Server.DropReports,
// which never drops a report of a recorded release, nor while a release
// is being agreed). The report IDs the servers exchange are the ones a
// release with differing sets exchanges anyway. A corrupt leader can
// make a purging helper drop the reports no release includes (by
// comparing over a short list), which gives it nothing it lacks: it can
// leave any report out of a release by not offering it. AskStatus is
// answered for the manifest's analysts and operators (Manifest.Operators:
// status only; a key may not be both); report counts and error lines go
// to an operator, and to an analyst only under replace-one, where n is
// public.
//
// Privacy. Every release is (ε, δ)-DP per privacy unit of its components
// (payload.PrivacyUnits: the ROC pair {Label, NotLabel} is one unit)
// under the manifest's neighbouring relation (replace by default, n
// public; under add/remove the leader does not tell the analyst n, and
// curves are normalised by a released noisy total: ecdf.Normaliser, which
// every result embeds as n and n_public), which both servers enforce and
// charge in, with each
// server adding its own full-scale noise (twice the variance of one
// curator; aggregation.Release.Guarantee states it). Neither server alone
// learns a party's bin: each holds one share of its report (a field DCF
// key, or a Prio3 input share).
package deploy
