// Package fss implements the distributed comparison function (DCF) of
// BCG+21.
//
// The DCF is that of Boyle, Chandran, Gilboa, Gupta, Ishai, Kumar and
// Rathee, "Function Secret Sharing for Mixed-Mode and Fixed-Point
// Secure Computation" (Eurocrypt 2021, eprint 2020/1392, Fig. 3;
// "BCG+21"), the function secret sharing of §4.2 of Barczewski, Mawass
// and Ramon, "Differentially Private Empirical Cumulative Distribution
// Functions" (dp-ecdf).
//
// # Function and comparison direction
//
// Gen(α, β, n) returns two keys k0, k1 such that for every x ∈ [0, 2^n)
//
//	Eval(k0, x) + Eval(k1, x) = f_{α,β}(x) = β·1[x < α]   (mod 2^64, componentwise)
//
// with β ∈ (Z_{2^64})^m, m payload components (count, label, probability in
// fixed point, …). The comparison is strict and "less than": x and α are
// read as n-bit strings, most significant bit first. Each key alone is
// pseudorandom: it reveals n and m, nothing about α or β.
//
// The ECDF needs the opposite direction: a party in 0-based bin b adds β to
// every prefix sum ending with a bin j ≥ b (dp-ecdf Eq. 4, φ_{≤t}). With N
// bins and n = bits.Len(N), the party generates keys for α = N − b and the
// servers evaluate prefix j at x = N − 1 − j, since x < α ⟺ b ≤ j. Both
// lie in [0, 2^n) because N < 2^n: a power of two N = 2^L of bins takes
// n = L + 1 bits. [PrefixDomain] implements this mapping (Alpha, Point, [Gen],
// SumPrefixes).
//
// # Construction
//
// A key holds an initial seed s^(0) ∈ {0,1}^128, one correction word
// CW^(i) = (sCW, VCW, tCW_L, tCW_R) per level i = 1…n and a final
// CW^(n+1) ∈ (Z_{2^64})^m. Evaluation walks the path of x in a binary
// tree: at each node the PRG expands the seed into two child seeds with
// control bits and value material for each child; when the control bit t
// is 1 the corrections are applied. The value words Convert(v) + t·VCW
// met on the path plus Convert(s^(n)) + t·CW^(n+1) at the leaf, times
// (−1)^b, form party b's share. Off the path of α the two parties' seeds
// coincide and their shares cancel; on it, Gen chooses VCW so that leaving
// the path of α to the left (x_i = 0, α_i = 1, hence x < α) adds β to the
// sum and leaving to the right adds 0 (BCG+21 Fig. 3 gives Gen and [Eval]).
// The encoded key has
// λ + n(λ + ℓ + 2) + ℓ bits, λ = 128, ℓ = 64m, plus a 4-byte header:
// 688 bytes for n = 16, m = 3 ([EncodedSize]).
//
// # PRG
//
// G expands a 128-bit seed s with fixed-key AES-128 in Matyas–Meyer–Oseas
// form with the orthomorphism σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi of Guo,
// Katz, Wang and Yu, "Efficient and Secure Multiparty Computation from
// Fixed-Key Block Ciphers" (S&P 2020): H_k(s) = AES_k(σ(s)) ⊕ σ(s), a
// circular correlation robust hash in the random permutation model. A
// distinct public key per output block separates the outputs; with m
// components the m + 2 keys are used in the order
//
//	k_0 left child seed, k_{1+j} value block j < m, k_{1+m} right child seed,
//
// where the 2m value words (two per block) are the left child's (words
// 0…m−1) then the right child's (m…2m−1), read as uniform elements of
// Z_{2^64}. Each child's control bit is the least significant bit of its
// seed block, then cleared in the seed. The value blocks of one child are
// a contiguous run of keys (left: blocks 0…⌈m/2⌉−1, right: ⌊m/2⌋…m−1),
// so one AES call per node serves Eval, Gen and the batch evaluator. The
// leaf value Convert(s^(n)) is the left value words of G(s^(n)), so no
// seed bit is used both as seed and as value. Key i is
// SHA-256("fedecdf/fss PRG key " ‖ i) truncated to 16 bytes.
//
// The standard library pipelines AES only in its CTR and GCM keystreams,
// which encrypt counters, not the arbitrary inputs σ(s), and its
// Block.Encrypt processes one block per call (about 4× slower per block
// than the CTR keystream). On amd64 with AES-NI a short assembly routine
// therefore encrypts eight independent blocks in flight (AESENC, as the
// standard library's own CTR code does, and equally constant time); on
// CPUs with VAES and AVX2 it encrypts sixteen, two per YMM register (VAESENC,
// also constant time), which more than halves the time per block, and with
// AVX-512 thirty-two, four per ZMM register, with the inputs σ(s) held in
// registers. Each
// loop is tested block for block against crypto/aes. Elsewhere, or with
// the purego build tag, the PRG runs on crypto/aes.
//
// # Cost
//
// Gen expands both children of one node per level and party: 2(n(m+2) +
// ⌈m/2⌉) AES blocks. Eval expands the path of x: n(1 + ⌈m/2⌉) + ⌈m/2⌉
// blocks (50 for n = 16, m = 3). The servers' hot loop is [SumBatch]: the
// sum over many keys of their shares at sorted points τ_1 < … < τ_B. Since
// the state after level i depends only on x_1…x_i, it walks the tree
// depth-first once for all B points, expanding each distinct node on
// their paths once: per inner node one block per child visited plus the
// value blocks of the children visited (m when both), per leaf ⌈m/2⌉
// ([BatchCost] counts nodes and blocks; B = 2^n is full-domain evaluation,
// about 2 + m + ⌈m/2⌉ blocks per point and key). For B ≪ 2^n the node
// count is about B·(n − log₂ B) + 2B, not B·n.
//
// Keys are processed in chunks of 64 walked in lockstep, so each AES call
// at a node encrypts one output for every key of the chunk, eight blocks in
// flight. Only Σ_keys is wanted and Eval is linear in the value words, so
// the value sums are carried per node, summed over the chunk, rather than
// per key: the value blocks are summed across keys inside the AES routine
// (never stored), Σ_keys t·VCW is computed once per node for both
// children, and the per-key work is the seed and control-bit update
// (with AVX2, four keys per instruction).
// Chunks are spread over GOMAXPROCS goroutines, each with its own
// accumulator, merged at the end; the walk allocates nothing.
// `fedecdf bench fss` reports the time per AES block in SumBatch as a ratio
// to the crypto/aes CTR keystream measured in the same process; the PRG
// alone against that keystream is `go test -bench 'PRG|AESCTR' ./fss`.
//
// # The field DCF
//
// [FieldKey], [GenField], [EvalField] and [EvalFieldBatch] are the same
// construction over the group F_p^m, p = [Modulus] = 2^64 − 2^32 + 1 (Prio3's
// Field64), for payloads that the servers must check (package
// internal/vdcf): one-hot identities are polynomial identities over a
// field, which Z_{2^64}, with its zero divisors, does not give. Gen and
// Eval are the ones above with +, − and negation taken mod p. Convert
// takes each field value as a 64-bit PRG word by rejection sampling: the
// PRG has the Z_{2^64} layout (two words per value block) plus two spare
// blocks, under keys k_{2+m} and k_{3+m}, and a node's 2m values (the left
// child's m, then the right child's) are the first 2m words below p of its
// stream, value blocks then spare blocks; the leaf's m values are the
// first m of the stream of value blocks 0 … ⌈m/2⌉−1 then the spares.
// Accepted words are exactly uniform on F_p; a word is rejected with
// probability (2^32 − 1)/2^64 < 2^-32, and only when at least 5 of a
// stream's at most 2m + 4 ≤ 68 words are (probability below
// C(68, 5)·2^-160 < 2^-136) does the stream run out, the values then being
// the first words reduced mod p. So a key is within (n+1)·2^-136 of
// pseudorandom in statistical distance beyond the PRG's security; m ≤ 32.
// A field key is encoded in Key's layout under version byte 3 (version 2
// keys, whose Convert reduced a whole 128-bit block per value, are
// refused), every value word canonical (below p): EncodedSize(n, m)
// bytes.
//
// Verifying a report needs each key's own full-domain shares, not their
// sum over keys, so EvalFieldBatch (FieldPrefixes for a PrefixDomain)
// walks chunks of keys in lockstep like SumBatch but keeps per-key
// values: the PRG's blocks are taken per key (hashNode: one pass of the
// AES routine over the chunk's seeds writes each key's child seeds and
// value blocks, eight blocks in flight on AES-NI, sixteen or thirty-two on
// VAES), each
// key's path value is carried as a 64-bit word congruent to it mod p (an
// addition, and 2^32 − 1 added back on carry) and made canonical once per
// leaf, four keys per instruction on AVX2 (eight on AVX-512 for the step
// to the children), and a rejected word (checked without branching on the
// word) sends that key's node through fieldValues. With VAES and AVX-512
// and m = 4 or 5 (the verified reports' shapes, without and with the
// probability) the walk is fused instead (fwide.go): one kernel per
// inner node runs the PRG on 32 keys' seeds and the seed and value steps
// on the AES output in registers, one per leaf the PRG and the shares,
// with the path values kept in the PRG's layout (two components per
// block), so PRG output is stored and read back only where m = 5 splices
// the right child's components across blocks. Per point and key the full domain costs about 2 + m + ⌈m/2⌉
// AES blocks, as SumBatch's Z_{2^64} words do.
//
// # Stability
//
// Gen, the key encoding (codec.go) and Eval are a stability contract:
// parties and servers of one deployment must agree on them, and servers
// store the encoded keys they accepted. TestGenKnownAnswer pins all three
// with a SHA-256 transcript under a deterministic reader (the same with
// -tags purego). Changing any of them is a breaking change: bump
// internal/protocol.Version, and regenerate the transcript. The field DCF
// (GenField, its encoding, EvalField) is pinned likewise by
// TestGenFieldKnownAnswer.
package fss
