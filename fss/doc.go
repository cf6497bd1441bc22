// Package fss implements the distributed comparison function (DCF) of
// Boyle, Chandran, Gilboa, Gupta, Ishai, Kumar and Rathee, "Function Secret
// Sharing for Mixed-Mode and Fixed-Point Secure Computation" (Eurocrypt
// 2021, eprint 2020/1392, Fig. 3; "BCG+21"), the function secret sharing
// of §4.2 of Barczewski, Mawass and Ramon, "Differentially Private
// Empirical Cumulative Distribution Functions" (dp-ecdf).
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
// servers evaluate prefix j at x = N − 1 − j, since x < α ⟺ b ≤ j.
// PrefixDomain implements this mapping (Alpha, Point, Gen, SumPrefixes).
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
// sum and leaving to the right adds 0 (specs/dcf.md restates Gen and Eval
// in this notation). The encoded key has
// λ + n(λ + ℓ + 2) + ℓ bits, λ = 128, ℓ = 64m, plus a 4-byte header:
// 688 bytes for n = 16, m = 3 (EncodedSize).
//
// # PRG
//
// G expands a 128-bit seed s with fixed-key AES-128 in Matyas–Meyer–Oseas
// form with the orthomorphism σ(x_hi ‖ x_lo) = (x_hi ⊕ x_lo) ‖ x_hi of Guo,
// Katz, Wang and Yu, "Efficient and Secure Multiparty Computation from
// Fixed-Key Block Ciphers" (S&P 2020): H_k(s) = AES_k(σ(s)) ⊕ σ(s), a
// circular correlation robust hash in the random permutation model. A
// distinct public key per output block separates the outputs: k_L gives the
// left child seed, k_R the right child seed (each child's control bit is
// the least significant bit of its block, then cleared in the seed), and
// k_{V,j} gives the j-th block of value material: the 2m value words of
// the left (words 0…m−1) and right (words m…2m−1) children, read as
// uniform elements of Z_{2^64}. The leaf value Convert(s^(n)) is the left
// value words of G(s^(n)), so no seed bit is used both as seed and value.
// The keys are SHA-256("fedecdf/fss PRG key " ‖ i) truncated to 16 bytes.
//
// The standard library pipelines AES only in its CTR and GCM keystreams,
// which encrypt counters, not the arbitrary inputs σ(s), and its
// Block.Encrypt processes one block per call (about 4× slower per block
// than the CTR keystream). On amd64 with AES-NI a short assembly routine
// therefore encrypts eight independent blocks in flight (AESENC, as the
// standard library's own CTR code does, and equally constant time); it is
// tested block for block against crypto/aes. Elsewhere, or with the purego
// build tag, the PRG runs on crypto/aes.
//
// # Cost
//
// Gen and Eval expand one node per level: Eval costs n child-seed blocks
// plus ⌈m/2⌉ or so value blocks per level plus ⌈m/2⌉ at the leaf. The
// servers' hot loop is SumBatch: the sum over many keys of their shares at
// sorted points τ_1 < … < τ_B. Since the state after level i depends only
// on x_1…x_i, it walks the tree depth-first once per key for all B points,
// expanding each distinct node on their paths once: per inner node one
// block per child visited plus the value blocks of the children visited
// (m when both), per leaf ⌈m/2⌉ (BatchCost counts nodes and blocks).
// Keys are processed in chunks walked in lockstep, so each AES call
// encrypts a chunk's worth of independent blocks under one fixed key, and
// chunks are spread over GOMAXPROCS goroutines, each with its own
// accumulator. Full-domain evaluation (B = 2^n) costs about
// (2 + m + ⌈m/2⌉) blocks per point and key; for B ≪ 2^n points the cost
// grows as B·(n − log₂ B) nodes rather than B·n.
package fss
