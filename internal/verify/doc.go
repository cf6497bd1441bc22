// Package verify is the additive backend's one-shot, verified upload.
//
// A party's record becomes one Prio3Histogram measurement, which both
// servers verify on their shares before it counts, and from which they
// form the prefix vectors of the count, label and 1 − label components
// alone, so that any number of queries needs no party online. Package
// server runs it as the additive backend.
//
// It uses Prio3 as specified in draft-irtf-cfrg-vdaf-13 §7 and implemented
// by github.com/cloudflare/circl/vdaf/prio3/histogram; nothing of Prio3 is
// re-implemented here.
//
// # Encoding
//
// On a public grid of N bins, the record (bin b, label y ∈ {0, 1}) is the
// one-hot vector h ∈ F^{2N} with h[y·N + b] = 1: bucket y·N + b for class y.
// Prio3Histogram proves exactly what fedecdf needs of it: every entry is 0
// or 1 and the entries sum to 1. Then
//
//	NotLabel(i) = Σ_{j ≤ i} h[j],  Label(i) = Σ_{j ≤ i} h[N + j],
//	Count(i)    = NotLabel(i) + Label(i),
//
// so count = label + (1 − label) = 1 at one bin holds by construction, and
// a party cannot set a label of 2, both label and not-label, two bins, a
// negative count or a count other than 1. These maps are linear, so each
// server applies them to its aggregate share (Aggregate.Prefixes).
//
// # Protocol
//
// The party draws a 16-byte nonce and runs Prio3 Shard with two shares
// (Scheme.Encode): the leader's input share is its measurement share (2N
// elements) and its proof share, the helper's is a 32-byte seed from which
// both are expanded, and the public share holds both servers' joint
// randomness parts. Each server runs PrepInit on its input share
// (Server.Prepare): it recomputes its joint randomness part from its
// measurement share and the nonce and compares it with the public share
// (ErrMismatch otherwise), then evaluates the FLP query on its shares,
// giving its verifier share, the one message it sends to the other server.
// Each server adds the two verifier shares and runs the FLP decision
// (PrepSharesToPrep) and PrepNext (Server.Finish): both compute the same
// decision from the same two messages, so a report is counted at both or at
// neither; a server whose PrepInit failed sends no message and the other
// rejects too. Accepted output shares are added per report set
// (Aggregate); a nonce counted before is refused (ErrReplay), as the draft
// requires (§9: a replayed report would let a corrupt server difference an
// honest party's contribution).
//
// The verify key, 32 bytes, is shared by the two servers and secret from
// parties; the Prio3 context string is Version, so a report made for
// another version fails verification.
//
// # Parameters and soundness
//
// Field128 (p = 2^128 − 7·2^66 + 1), one proof, chunk length c = ⌈√(2N)⌉
// (ChunkLength): M = ⌈2N / c⌉ calls to the gadget ParallelSumInnerMul of
// degree 2 and arity 2c. At N = 1024: c = 46, M = 45, the wire polynomials
// are interpolated at P = 64 points (the next power of two above M), and the
// proof has 2c + 2(P − 1) + 1 = 219 elements.
//
// The Valid circuit outputs the range check Σ_k Σ_j r_k^{j+1}·h_{kc+j}·(h_{kc+j}
// − 1) (one gadget call per chunk k, joint randomness r_k) and the sum check
// Σ h − 1; the FLP combines the two outputs with query
// randomness and checks the gadget polynomial at a random point t. For a
// measurement that is not one-hot, by Schwartz–Zippel and BBCGI19 (Boneh,
// Boyle, Corrigan-Gibbs, Gilboa, Ishai, CRYPTO 2019, Thm 4.3, as restated in
// draft-irtf-cfrg-vdaf-13 §7.3 and its security considerations) a report is
// accepted with probability at most
//
//	ε ≤ c/p  (a nonzero range-check polynomial in r_k vanishes)
//	  + 1/p  (the random combination of the two outputs vanishes)
//	  + 2(P − 1)/(p − P)  (a wrong gadget polynomial agrees at t),
//
// which at N = 1024 is (46 + 1 + 126)/2^128 < 2^-120. The joint randomness
// is a hash of the party's own shares, so a party can retry it: with 2^k
// hash evaluations the first term grows to 2^k·c/p, and ε ≤ 2^-60 holds for
// any party doing fewer than 2^60 evaluations per report. The query
// randomness comes from the servers' secret key and cannot be ground. This
// margin is why Prio3Histogram uses Field128 with one proof: over Field64
// one proof gives ε ≈ 2^-56 before any grinding.
//
// # Zero knowledge
//
// A server sees its input share (the leader: the measurement and proof
// minus a pseudorandom vector expanded from the helper's seed; the helper:
// that seed), the public share, and the peer's verifier share. The shares
// are pseudorandom given the other's; the joint randomness parts are hashes
// under blinds the server does not know; the combined verifier is the
// circuit output (0 for a valid report) and the wire and gadget polynomial
// evaluations at t. Each wire polynomial interpolates a uniformly random
// seed (chosen by the party) and the circuit's wire values at the P points,
// so for any t outside those points (PrepInit checks t^P ≠ 1) its value at
// t is uniform, and the gadget value is the gadget of those: the view is
// simulatable without the record for whatever key the servers hold, and a
// deviating server learns no more, since the other server's message is a
// function of the other's own share (draft §9; Barnes, Cook, Patton, Wood,
// "Verifiable Distributed Aggregation Functions", PoPETS 2023). Privacy of
// the released prefixes then comes
// from the servers' differential-privacy noise, as before; validity is not
// truth: a party may still report a false bin or label.
//
// # A probability component
//
// Datasets that collect the predicted probability in fixed point need its
// per-bin sum. Two ways fit: a second measurement, Prio3SumVec over N
// entries of 32 bits, proving each entry is in range, plus an equality
// between its support and the histogram's bin, which Prio3 alone cannot
// link across two measurements (a party could put its probability in
// another bin than its record, or spread it over several: the gap); or
// one combined circuit (a custom FLP whose Valid checks the one-hot
// histogram, the bit decomposition of the probability and that it sits at
// the histogram's bin), which circl does not expose (its FLP is internal).
// The first would also multiply the upload by ≈ 32 (32·N more field
// elements). Neither is implemented: the additive backend refuses
// releases of the probability component (package server), and its
// Hosmer–Lemeshow tests use the plans that need none (the roc and grid
// allocations, E_1 from bin centres); datasets that need the probability
// use the dcf backend.
//
// # In the servers
//
// Package server runs this between leader and helper over the protocol
// (Prepare, Prepared, Decide in internal/protocol), with the report ID as
// the nonce (EncodeAt), and a confirmation step Prio3's one round lacks:
// each server decides from both verifier messages, and the helper counts
// a report only once the leader's final verdict agrees, so that a corrupt
// server's bad message makes the report rejected at both, never counted
// at one (server/doc.go, "The additive backend"). Forge makes invalid
// reports of the kinds the tests use, for simulate --malicious.
//
// # What the tests cover and what they do not
//
// The adversary tests alter an honest report's shares (a second bucket,
// value 2, p − 1, all zero, both classes, shares of two reports, another
// report's proof, random or truncated shares) and check both servers
// reject; altering a measurement share is caught by the joint randomness
// binding, altering a proof by the FLP decision. A party that builds a
// well-formed proof for a measurement that is not one-hot needs circl's
// internal prover; that case rests on the bound above and on circl's own
// tests against the draft's test vectors.
package verify
