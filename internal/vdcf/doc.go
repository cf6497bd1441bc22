// Package vdcf is the verified upload of the DCF backend.
//
// A party's record becomes a pair of field DCF keys (fss.GenField) and a few
// field elements of correlated randomness, and both servers check, on
// their shares of the report's full-domain prefix vectors alone, that it
// encodes exactly one record, learning nothing else about it. It is the
// malicious-secure sketching of Poplar (Boneh, Boyle, Corrigan-Gibbs,
// Gilboa, Ishai, "Lightweight Techniques for Private Heavy Hitters", IEEE
// S&P 2021, §4), adapted to a distributed comparison function evaluated
// over its whole domain, with the check of the label bit on the same
// shares, and, where the dataset collects it, a probability within its
// fixed-point range at the record's bin (NewWithProbability). The
// construction and its proofs are restated below.
//
// # Field and vectors
//
// Everything lives in F_p, p = 2^64 − 2^32 + 1 (fss.Modulus, Prio3's
// Field64). With N bins a record (bin b, label y ∈ {0, 1}) is the DCF
// payload β = (1, y, κ₁ + κ₂y[, p], κ₁' + κ₂'y) at α = N − b
// (fss.PrefixDomain): components Count and Label (the indices of package
// payload), MAC, Probability in a scheme that carries it ("Probability"
// below), and last the second check's MAC, where κ₁, κ₂ and κ₁', κ₂' are
// uniform elements the party keeps. A report is checked twice,
// independently ("Two checks"); what follows describes one check, with
// its own challenge, correlated randomness and MAC (κ₁, κ₂ for the first,
// κ₁', κ₂' for the second). Each
// server evaluates its key over the whole domain and obtains its share of the
// prefix vectors P_c(j) = β_c·1[b ≤ j], j < N, whose
// count and label (and probability) it folds into its aggregate if the
// report is accepted (Server.PrepareAll computes all that follows from
// the vectors' runs as the walk hands them out, keeping only those
// components, Prepared.Summed, and never holds a vector whole); its share
// of the not-label prefixes is P_Count − P_Label, so label + not-label =
// count holds by construction and costs no key component. The first
// differences ΔP_c(j) = P_c(j) − P_c(j−1) are β_c·e_b for an honest party;
// whatever keys a party sends, the two servers' evaluations define three
// vectors ΔC, ΔL, ΔM ∈ F_p^N, fixed once the report is sent.
//
// A report is valid when ΔC = e_b for some b and ΔL = y·e_b with
// y ∈ {0, 1}: one bin, count 1, a label bit at that bin, and so a
// not-label 1 − y there. The MAC component is not a validity condition; it
// is what makes the check zero-knowledge against a server that deviates.
//
// # Protocol
//
// Party (Encode): draw the nonce, a₁, a₂, κ₁, κ₂ uniform in F_p (from two
// seeds, "Seeds" below) and the keys (k₀, k₁) = GenField(N − b, (1, y,
// κ₁ + κ₂y)); form
//
//	(a₁, c₁ = a₁², a₂, c₂ = a₂(a₁ − a₂), κ₁, κ₂, μ = κ₁a₁ + κ₂a₂)
//
// and split each of the seven into two additive shares, one per server.
// Server s receives k_s and a 16-byte seed from which it expands its
// shares, with explicit shares of a few of the values (ShareSize bytes).
//
// Both servers derive the challenges of a report's two checks from
// their shared key K, secret from parties, and the report's nonce, once
// the report is fixed (PrepareAll): from the AES-128-CTR keystream under
// the first 16 bytes of SHA-256(Version ‖ 0 ‖ K ‖ nonce) from the zero
// counter block, 64-bit words rejection-sampled into F_p, check 0's
// challenge and then check 1's, each the coefficients ρ₁, ρ₂, ρ₃ ∈
// F_p∖{0} (each redrawn while zero; ρ₄ … ρ₆ and s_i with the
// probability), then the column factors β_0 … β_7 and the row factors
// α_0 … α_{a−1} of its challenge vector, a = ⌈N/8⌉:
//
//	r_j = α_h·β_l,   j = 8h + l, 0 ≤ l < 8,
//
// a tensor α⊗β cut to its first N elements ("Tensor challenges"). Each
// server computes from its prefix shares, in one pass over the first
// differences ΔP(j) = P(j) − P(j − 1) of its shares:
//
//	x₁ = ⟨r, ΔC⟩, x₂ = ⟨r, ΔL⟩, x_M = ⟨r, ΔM⟩,
//	q = ⟨r∘r, ΔC⟩, t = P_C(N − 1) − [s = 0]          (t: total count − 1)
//
// (its shares of these), and sends d₁ = x₁ − a₁, d₂ = x₂ − a₂ (first
// message, Message1Size bytes). On receiving the other's (Exchange), both
// know D₁ = x₁ − a₁ and D₂ = x₂ − a₂ and E = D₁ − D₂ = (x₁ − x₂) − (a₁ −
// a₂); server s sends its share (second message, Message2Size bytes) of
//
//	z = [s=0]D₁² + 2D₁a₁ + c₁ − q                              (x₁² − q)
//	  + ρ₁·([s=0]D₂E + D₂(a₁ − a₂) + Ea₂ + c₂)                 (x₂(x₁ − x₂))
//	  + ρ₂·t
//	  + ρ₃·(κ₁D₁ + κ₂D₂ + μ − x_M)                             (κ₁x₁ + κ₂x₂ − ⟨r, ΔM⟩)
//
// Both add the two shares (Finish) and accept iff z = 0 for both checks:
// the same values at both, so a report is accepted at both servers or at
// neither. The first message carries both checks' openings, the second
// both checks' shares of z.
// A server that cannot decode its share sends nothing, and the other
// rejects too.
//
// # Soundness
//
// Let the reconstructed correlated values be any a₁, c₁, a₂, c₂, κ₁, κ₂, μ
// and write δ₁ = c₁ − a₁², δ₂ = c₂ − a₂(a₁ − a₂), δ₃ = μ − κ₁a₁ − κ₂a₂.
// Adding the two honest servers' shares, Beaver's identity gives
//
//	z = A + ρ₁B + ρ₂t + ρ₃T,         A = ⟨r, ΔC⟩² − ⟨r∘r, ΔC⟩ + δ₁,
//	B = ⟨r, ΔL⟩·⟨r, ΔC − ΔL⟩ + δ₂,   t = Σ_j ΔC_j − 1,
//	T = κ₁⟨r, ΔC⟩ + κ₂⟨r, ΔL⟩ − ⟨r, ΔM⟩ + δ₃,
//
// a polynomial Z(r, ρ) whose coefficients the
// party fixed when it sent the report (for the second check, with its own
// MAC component M' in place of M). Claim: if the report is invalid, Z
// is not the zero polynomial. Distinct monomials in ρ make Z ≡ 0 equivalent
// to A ≡ B ≡ T ≡ 0 and t = 0. The degree-2 part of A is
// Σ_j (ΔC_j² − ΔC_j)·r_j² + 2·Σ_{j<k} ΔC_jΔC_k·r_jr_k, zero iff every
// ΔC_j ∈ {0, 1} with at most one of them 1 (p is odd); with t = 0, ΔC =
// e_b. The degree-2 part of B is a product of two linear forms, zero in
// the integral domain F_p[r] iff one factor is: ΔL = 0 or ΔL = ΔC = e_b.
// Together these are exactly validity. With r = α⊗β the same holds of Z
// as a polynomial in (α, β, ρ), of total degree at most 5, and by the
// Schwartz–Zippel lemma an invalid report passes one check with
// probability at most
//
//	ε₁ = 5/(p − 1) < 2^-61.67   per check, whatever N
//
// ("Tensor challenges"), plus the advantage of distinguishing the AES-CTR
// stream under SHA-256(… K …) from uniform, since the party does not know
// K. An inconsistent triple (δ₁, δ₂ ≠ 0) only adds a
// constant the party fixed before the challenge was drawn, so it cannot
// cancel a nonzero part of A or B; it makes a valid report fail, which
// harms only the party. The MAC term is not needed for soundness: T ≡ 0 or
// not, the argument above only uses A, B and t. Soundness is against
// parties, with both servers following the protocol: a corrupt server can
// add what it likes to its own aggregate share whatever is verified, as in
// Prio and Poplar.
//
// # Tensor challenges
//
// The challenge vector of a check is r = α⊗β cut to N elements: prefix j
// sits at row h = ⌊j/8⌋ and column l = j mod 8, r_j = α_h·β_l, with 8
// column factors β ∈ F_p^8 and a = ⌈N/8⌉ row factors α ∈ F_p^a drawn per
// report and check (8: the lanes of an AVX-512 vector). The sketch then
// needs no vector of N challenge elements: each server sums, per column,
// the first differences of its shares times α_h, and weighs the 8 column
// sums by β_l at the end,
//
//	⟨r, ΔP⟩ = Σ_l β_l·Σ_h α_h·ΔP(h, l),   ⟨r∘r, ΔC⟩ = Σ_l β_l²·Σ_h α_h²·ΔC(h, l),
//
// so a check draws a + 8 words (at N = 1024, 128 + 8) instead of N,
// squares a + 8 elements instead of N, and keeps its 4N
// multiply-accumulates (5N with the probability).
//
// Soundness. Substitute r_j = α_hβ_l in the polynomial Z of "Soundness":
// Z becomes a polynomial in (α, β, ρ, s). Its degree: A has r-degree 2,
// hence (α, β)-degree 4; ρ₁B has 1 + 4 = 5; ρ₃T (T linear in r) 3;
// ρ₂t 1; with the probability ρ₄·Bits (s_i²) 3, ρ₅·Supp 3, ρ₆·Top 2. So
// deg Z ≤ 5. Claim: for an invalid report Z is still not the zero
// polynomial. As before, distinct monomials in ρ make Z ≡ 0 equivalent
// to A ≡ B ≡ T ≡ 0, t = 0 (and Bits ≡ Supp ≡ Top ≡ 0); each of A, B is
// a homogeneous part of degree 4 in (α, β) plus a constant δ, so both
// parts vanish. Distinct j give distinct monomials α_hβ_l, so a linear
// form ⟨r, x⟩ = Σ_j x_j·α_hβ_l is zero iff x = 0; the degree-4 part of B
// is the product ⟨r, ΔL⟩·⟨r, ΔC − ΔL⟩ of two such forms, zero in the
// integral domain F_p[α, β] iff ΔL = 0 or ΔL = ΔC, as before. The
// degree-4 part of A is ⟨r, ΔC⟩² − ⟨r∘r, ΔC⟩; its coefficients, by
// monomial:
//
//	α_h²β_l²                  ΔC_(h,l)² − ΔC_(h,l)
//	α_h²β_lβ_l'   (l ≠ l')     2·ΔC_(h,l)·ΔC_(h,l')
//	α_hα_h'β_l²   (h ≠ h')     2·ΔC_(h,l)·ΔC_(h',l)
//	α_hα_h'β_lβ_l' (h ≠ h', l ≠ l')  2·(ΔC_(h,l)·ΔC_(h',l') + ΔC_(h,l')·ΔC_(h',l))
//
// (a product r_jr_k, j ≠ k, gives the last monomial from the two pairs
// {(h,l), (h',l')} and {(h,l'), (h',l)}, and no other pair gives any of
// them). All zero: the first row makes every ΔC_j ∈ {0, 1}; then each
// other coefficient is twice a sum of products of 0s and 1s, an integer
// in [0, 4], below p, so zero only if no two ΔC_j are 1. With t = 0,
// ΔC = e_b. Hence Z ≢ 0 exactly when the report is invalid, and by the
// Schwartz–Zippel lemma (each
// variable uniform on a set of at least p − 1 elements: F_p for α, β, s;
// F_p∖{0} for ρ; the lemma's induction allows a set per variable) an
// invalid report passes one check with probability at most
//
//	ε₁ = deg Z/(p − 1) = 5/(p − 1) < 2^-61.67,
//
// against 3/(p − 1) for r uniform on F_p^N: the price of drawing a + 8
// words instead of N. Two checks: (5/(p − 1))² = 25/(p − 1)² < 2^-123.35
// ("Two checks"). Completeness and zero knowledge do not depend on how r
// is drawn: the identities hold for every r, and the simulation
// ("Zero knowledge") gives the corrupt server the challenge anyway.
//
// Both factors must be unknown when the report is fixed. If β were
// known (fixed per key, or public), a count vector e_b + v with v on one
// row h and Σ_l v_l = Σ_l v_l·β_l = Σ_l v_l·β_l² = 0 (5 equations over
// both checks in 8 unknowns: a nonzero v exists) would pass both
// checks for every α, since ⟨r, v⟩ = α_h·Σ_l v_l·β_l; likewise along a
// column for a known α (TestTensorFactorsUnpredictable: 20 of 20
// accepted with either factor fixed per key, 0 of 20 as drawn). Drawn
// per report from the stream, both are uniform and independent of
// everything the party saw before ("Soundness across reports").
//
// # Two checks
//
// Each check is complete on its own (the claim above holds for either:
// Z_k ≡ 0 iff the report is valid and its check-k correlated values are
// consistent where they must be), and the two checks' challenges are
// disjoint parts of the stream, so that (α, β, ρ, s) of check 0 and
// (α', β', ρ', s') of check 1 are independent and uniform. An invalid
// report fixes both Z₀ ≢ 0 and Z₁ ≢ 0 before either challenge is drawn,
// so it is accepted with probability
//
//	Pr[Z₀(α, β, ρ, s) = 0 ∧ Z₁(α', β', ρ', s') = 0] ≤ ε₁² = 25/(p − 1)² < 2^-123.35
//
// per report, below issue 31's 2^-120 and comparable to the VDAF draft's
// target for Field64 (draft-irtf-cfrg-vdaf: Field128 with one proof, or
// Field64 with several). The probability's terms keep the bound: Z_k still
// has degree at most 5 ("Soundness of the probability"). A single check value
// cannot do this: one evaluation of one nonzero polynomial over F_p
// vanishes with probability about deg/p, whatever the number of
// variables.
//
// Each check needs its own MAC: with one pair κ₁, κ₂ for both, a corrupt
// server that shifts both checks' openings by the same (ε₁, ε₂) adds
// ρ₃(κ₁ε₁ + κ₂ε₂) to z₀ and ρ₃'(κ₁ε₁ + κ₂ε₂) to z₁, and ρ₃'z₀ − ρ₃z₁
// is free of κ and reveals x₁, x₁' (the bin): the MAC masks a check value
// only if its key is independent of every other revealed value
// (TestCorruptLeaderCannotCancelTheMACsOfTwoChecks). Hence
// the second MAC component κ₁' + κ₂'y of the DCF payload, and a second
// block of correlated randomness (masks, triples, keys and μ' =
// κ₁'a₁' + κ₂'a₂', with the probability its own bits, masks and MACs).
//
// # Soundness across reports
//
// Every report has its own challenges, drawn from K and its nonce after
// it is sent. Model the streams as uniform: for each nonce and check its
// (α, β, ρ, s) uniform and independent of other nonces' and checks'
// (domain separation by the nonce; the checks' parts of a stream are
// disjoint). Let a party (or colluding
// parties: one adversary) send q reports adaptively, seeing after each
// what the deployment shows parties and analysts: the decision and its
// reason, and releases over the accepted reports, whose noise the servers
// draw independently of the challenges. Report i fixes, when it is sent,
// its polynomials Z_i (above); call accept-iff-Z_i ≡ 0 its predicted
// decision (the reasons other than ErrProof do not depend on the
// challenge at all). Claim: with probability at least 1 − q·ε every
// decision is the predicted one, ε = ε₁² the per-report bound of "Two
// checks"; in particular no invalid report (Z_i ≢ 0) is accepted.
//
// Proof. Consider the hybrid run in which every decision is replaced by
// its prediction. Everything the party sees there is a function of its
// own coins and of randomness independent of the challenges of nonces it
// has not sent yet, so its i-th report, hence Z_i, is independent of the
// challenges of report i's nonce (a nonce sent again gets the same
// challenges, but the servers refuse a report ID they decided, and an
// upload's ID is its nonce). The real and the hybrid runs agree until the
// first report whose real decision differs from its prediction; a
// difference at i needs Z_i ≢ 0 and both checks to vanish at report i's
// challenges, probability at most ε by "Two checks". A union bound over
// the q reports gives q·ε, e.g. below 2^-83.3 for q = 2^40 reports under
// one K. □
//
// What leaks cannot do. The servers' messages depend on the challenges:
// a party that reads the leader's first message for its own report
// learns D₁ = ⟨r, ΔC⟩ − a₁ (it made both keys and knows a₁), one linear
// equation in that report's r. Under Version v4, whose r was drawn once
// per key, N such leaks gave all of r and a forgery at will
// (TestLeakedMessagesDoNotForge: 20 of 20 accepted); now each report's r
// is drawn for it alone, after it is fixed, so the messages of decided
// reports say nothing about the challenge of the next one, and the test's
// forgeries from the solved r are rejected. The same holds of each
// tensor factor on its own ("Tensor challenges"). The messages of a report not
// yet decided do bear on its own decision, and they stay between the
// servers: over libp2p on their Noise channel, in process in memory, and
// the verified DCF helper's tentative record keeps its own shares of the
// check values rather than the leader's openings (package server,
// "Verification state across restarts"). Leaking K itself still leaks
// every future challenge: a new K (a regenerated manifest) is the remedy.
//
// This is why F_p and not Z_{2^64}: the one-hot identities need a field
// (in Z_{2^64}, with zero divisors, Schwartz–Zippel fails: the nonzero
// 2^63·r² vanishes at every even r); and why Field64 suffices: the
// check has degree 5 whatever N, so one check gives ε₁ < 2^-61.67 and
// two give 2^-123.35, while Field128 would double the keys' value words
// and the AES blocks that produce them; a second check adds one field
// component (its MAC): one more AES block per node of the key's walk (a
// node's m value blocks hold both children's m values), 2 + m + ⌈m/2⌉
// = 8 blocks per point instead of 7. (Prio3 needs Field128 for a histogram because the
// error of its FLP grows with the circuit, internal/verify.)
//
// # Probability
//
// A scheme made with NewWithProbability carries a fourth DCF component,
// Probability, with payload p: the party's fixed-point probability
// round(p·2^32), an integer in [0, 2^32] (payload.ProbabilityScale; 2^32 is
// probability 1, so the range needs 33 bits, not 32). Validity then also
// asks ΔP = p·e_b (ΔP the first differences of the probability prefixes)
// with p ∈ [0, 2^32]. The party adds to its correlated randomness, each
// split into two additive shares as above,
//
//	b_0 … b_32          the bits of p, p = Σ_i 2^i·b_i
//	a'_0 … a'_32, a_p   uniform masks
//	C = Σ_i a'_i²,  c_p = a₁·a_p,  c_t = a'_32·a_p
//	κ'_0 … κ'_32, κ_p   uniform MAC keys,  m_i = κ'_i·b_i,  m_p = κ_p·p
//
// and μ becomes κ₁a₁ + κ₂a₂ + κ_p·a_p + Σ_i κ'_i·a'_i. The challenge adds
// ρ₄, ρ₅, ρ₆ ∈ F_p∖{0} and s_0 … s_32 ∈ F_p, drawn per report from its
// stream after ρ₁ … ρ₃. With p̂ = Σ_i 2^i·b_i and x'_i = s_i·b_i (shares computed locally,
// linearly), the first message also carries d_p = p̂ − a_p and
// d_i = x'_i − a'_i, and z gains
//
//   - ρ₄·(Σ_i x'_i² − Σ_i s_i²·b_i)             (Bits: the b_i are bits)
//   - ρ₅·(⟨r, ΔP⟩ − p̂·x₁)                       (Supp: ΔP = p̂·e_b)
//   - ρ₆·(x'_32·p̂ − 2^32·x'_32)                 (Top: b_32 = 1 ⇒ p̂ = 2^32)
//
// with Σ_i x'_i² = Σ_i (D'_i² + 2D'_i·a'_i) + C, p̂·x₁ = D_pD₁ + D_p·a₁ +
// D₁·a_p + c_p and x'_32·p̂ = D'_32·D_p + D'_32·a_p + D_p·a'_32 + c_t
// (Beaver, the public products at the leader), and the MAC term gains
// Σ_i (κ'_i·D'_i − s_i·m_i) + κ_p·D_p − m_p, which with the κ·a in μ is
// Σ_i κ'_i·(x'_i − s_i·b_i) + κ_p·(p̂ − p) = 0 for an honest party.
//
// Each multiplication has a challenge-dependent factor (s_i in x'_i, r in
// x₁): a party's inconsistent C, c_p or c_t only adds a constant to a
// polynomial whose non-constant part it cannot cancel. (A check
// Σ_i ρ_i·(b_i² − b_i) with b_i² from party-supplied squares would not be
// sound: an error c_i − a'_i² = b_i − b_i² cancels it whatever ρ.) One
// combined square C serves all 33 bits: the squares are only ever summed.
//
// Cost: one Probability key component ((n + 1)·8 bytes), 145 correlated
// values instead of 7 (70 more explicit shares, "Seeds"), and 34 more
// openings in the first message, per server and report; the server work
// added is O(1) in N (about 200 field multiplications) besides the fourth
// component of the walk and the sketch.
//
// # Soundness of the probability
//
// With the probability, Z gains ρ₄·Bits + ρ₅·Supp + ρ₆·Top, and T the MAC
// terms above:
//
//	Bits = Σ_i s_i²·(b_i² − b_i) + δ₄,      δ₄ = C − Σ_i a'_i²,
//	Supp = ⟨r, ΔP − p̂·ΔC⟩ + δ₅,             δ₅ = c_p − a₁a_p,
//	Top  = s_32·b_32·(p̂ − 2^32) + δ₆,       δ₆ = c_t − a'_32a_p,
//
// where b_i, p̂ are the reconstructed (party-chosen) values. Z still has
// total degree at most 3 (ρ₄s_i²), and by the distinct monomials in ρ, Z ≡
// 0 requires Bits ≡ Supp ≡ Top ≡ 0 besides the conditions above. Bits ≡ 0:
// each coefficient of s_i², b_i² − b_i, is zero, so every b_i ∈ {0, 1}
// and p̂ ∈ [0, 2^33) as an integer. Top ≡ 0: b_32·(p̂ − 2^32) = 0, and
// p̂ − 2^32 = Σ_{i<32} 2^i·b_i < 2^32 < p is zero in F_p only if it is
// zero, so p̂ ≤ 2^32. Supp ≡ 0: ΔP = p̂·ΔC = p̂·e_b. Together: the
// probability is an integer in [0, 2^32] at the record's bin, and nowhere
// else. So the bound is unchanged, a single Schwartz–Zippel bound on one
// polynomial (no union over sub-checks): with r = α⊗β, Supp's
// ⟨r, ΔP − p̂·ΔC⟩ is a bilinear form in (α, β), zero only if ΔP = p̂·ΔC,
// ρ₅·Supp and ρ₄·Bits have degree 3 and ρ₆·Top 2, below ρ₁·B's 5, so
//
//	ε₁ = 5/(p − 1) < 2^-61.67   per check, with or without the probability,
//
// and ε₁² < 2^-123.35 per report for the two checks.
//
// # Seeds
//
// The correlated randomness is one block per check, the second after the
// first, each laid out as below. Of a block's correlated values, the masks (a₁, a₂, and with the probability
// a'_0 … a'_32, a_p) and the MAC keys (κ₁, κ₂, κ'_0 … κ'_32, κ_p) are
// free: uniform and constrained by nothing. The others are determined by
// them and the record: c₁, c₂, μ, and with the probability the bits b_i,
// the MACs m_i, C, c_p, c_t and m_p (3 of 7 values, 73 of 145, per block). The party
// draws two seeds σ₀, σ₁ of 16 bytes and expands each into one element
// per correlated value,
//
//	e_s = ChaCha8 keyed with SHA-256(Version ‖ 1 ‖ s ‖ σ_s ‖ nonce),
//	      64-bit words rejection-sampled into F_p, in layout order
//
// (usage byte 1; the challenges' is 0; 2 labelled v4's per-key r). A free
// value v is e₀(v) + e₁(v), and server s's share of it is e_s(v). Of a
// determined value v one server t receives its share explicitly,
// v − e_{1−t}(v), and the other's share is its expansion e_{1−t}(v). The determined values, in layout
// order, go alternately to the helper and the leader, helper first, so
// that the two uploads differ by at most one element. Server s's share of
// the report is
//
//	k_s ‖ σ_s ‖ its explicit shares         (ShareSize(s) bytes)
//
// and it expands σ_s in PrepareAll, which has the nonce. This is Prio3's
// seed compression of input shares (draft-irtf-cfrg-vdaf: the helpers'
// shares are seeds), here for both servers: with two servers a free value
// costs no upload, a determined one a single element to one server.
//
// The expansion is ChaCha8 from Go's math/rand/v2 (a cryptographically
// strong generator under a 256-bit key, here SHA-256 of a 128-bit seed,
// the fss keys' seed length), in the standard library and fast beside a
// key's walk (at most 290 elements per report and server); the
// challenges, ⌈N/8⌉ + 8 + 3 words per check (+ 36 with the probability),
// use AES-CTR with the CPU's AES instructions. The server index and the
// nonce separate the streams: one seed expands differently for the two
// servers and under two nonces. So a report copied verbatim under another
// nonce (report ID), or with one server's seed replaced by another
// report's, fails: each server expands at least one determined value the
// other holds explicitly (c₂ at the leader, μ at the helper), which a new
// expansion offsets by a fresh pseudorandom element; for μ, z gains ρ₃
// times it, for c₂, ρ₁ times it, so the report is accepted with
// probability 1/p, up to the PRG.
//
// Soundness is unaffected: whatever seeds and explicit shares a party
// sends, they fix the reconstructed correlated values before the
// challenge, which the party cannot compute, and the arguments above hold
// for any such values (an explicit share inconsistent with the seeds is
// an inconsistent value: a nonzero δ, or bits that are not the
// probability's, rejected like any other).
//
// # Zero knowledge
//
// Against one corrupt server s* (either), with an honest party: its view
// is its key, its seed σ_{s*} and explicit shares, the nonce and K (hence
// both checks' r, ρ, s), the honest server s's two messages and the
// decision. The argument below is per check; the two checks' masks,
// triples and MAC keys are independent blocks of the party's randomness,
// so the honest server's messages of the two checks are independent too
// (a shift of both checks' openings meets two independent MAC keys:
// "Two checks"). The view is simulatable without
// (b, y, p), up to two computational terms, fss's key privacy and the
// PRG of "Seeds" (distinguishing ChaCha8 under SHA-256 of an unknown
// 128-bit seed from uniform words):
//
//   - the key k_{s*} is pseudorandom given n and m (fss: BCG+21's key
//     privacy; the statistical distance of its rejection sampling of
//     field values, below (n+1)·2^-136 per key, is the only
//     non-computational term);
//   - the shares of the correlated values: s*'s own, e_{s*} where it has
//     no explicit share, are its seed's expansion, independent of the
//     record; its explicit shares v − e_s(v) are masked by s's
//     expansion, which s* never sees (σ_s is in s's share only), so they
//     are pseudorandom and independent of the record (this is where the
//     bits b_i and the products of the record are hidden); and the free
//     values e_{s*}(v) + e_s(v) are pseudorandom given s*'s view;
//   - s's first message (x₁ˢ − a₁ˢ, x₂ˢ − a₂ˢ) is uniform on F_p² up to
//     the PRG: s's shares of a₁ and a₂ are outputs of its expansion that
//     appear nowhere else in s*'s view; so are its probability openings,
//     masked by s's shares of a_p and a'_i;
//   - s's second message: let s*'s first message differ by (ε₁, ε₂) from
//     the one its share dictates (any deviation in evaluating its key or
//     sketching is such a shift), and see below;
//   - the decision: for ε ≠ 0 a rejection except with probability 1/p,
//     for ε = 0 a function of s*'s own shift of its second message:
//     independent of the record.
//
// For an honest record A = B = t = T = 0 at ε = 0, and the shifted
// openings give
//
//	z = 2ε₁x₁ + ε₁² + ρ₁(x₂(ε₁ − ε₂) + ε₂(x₁ − x₂) + ε₂(ε₁ − ε₂))
//	  + ρ₃(κ₁ε₁ + κ₂ε₂) + (s*'s shift of its own second message).
//
// Without the MAC term z would reveal x₁ = r_b, hence the bin (the attack
// that Poplar's MAC prevents). With it, (κ₁, κ₂) is (pseudo)uniform and
// independent of the rest of s*'s view, so for ε ≠ 0 z is uniform and s's
// second message is a uniform element; for ε = 0 it is minus s*'s own
// honest share plus its shift, which s* computes itself.
//
// With the probability, shifts ε_p of d_p and ε'_i of d_i add to z terms
// such as ρ₄(2ε'_i·x'_i + ε'_i²) = ρ₄(2ε'_i·s_i·b_i + ε'_i²), which
// would reveal the bit b_i, and ρ₅ε_p·x₁, which would reveal the bin;
// the MAC term adds ρ₃·(κ₁ε₁ + κ₂ε₂ + κ_pε_p + Σ_i κ'_iε'_i), and every
// opening has its own key, uniform and independent of s*'s view (which
// holds one share of each κ and of each m_i), so z is again uniform for
// any nonzero shift (TestCorruptLeaderCannotReadAProbabilityBit). One
// key for all bits would not do: s* knows the challenge and could pick a
// nonzero shift that the key's single coefficient cancels.
//
// So a corrupt server cannot make the decision depend on the record:
// shifting its share at one bin j (the selective-failure attack on Prio's
// SNIPs, Corrigan-Gibbs and Boneh, NSDI 2017) makes the report fail
// whether or not b = j (TestTamperedPrefixRejectedWhateverTheRecord). It
// can still refuse any report it likes, at the cost of being seen to; what
// the release then reveals is bounded by the release's differential
// privacy, as for any report left out.
//
// # Cost
//
// Upload to server s (ShareSize): fss.EncodedSize(n, m) + 16 + 8·e_s
// bytes, n = bits.Len(N), with m = 4 components and e = (3, 3) explicit
// shares (leader, helper), or with the probability m = 5 and e = (73, 73).
// At N = 1024: 623 bytes each, 1.07× the 583 bytes of an unverified
// Z_{2^64} key with the four payload components (v4, one check: 511 and
// 519); with the probability 1279 bytes each (v4: 887 and 895). Exchange
// per server and report: 32 + 16 bytes in two messages; with the
// probability 576 + 16. Party work: the keys, two SHA-256 hashes and
// 2·14 (2·290) ChaCha8 words. Server work per report: the full-domain
// evaluation of one field key, which the aggregate needs anyway but here
// per key rather than summed over keys (fss.EvalFieldBatch); the seed's
// expansion; one SHA-256 and one AES key schedule for both checks' challenges;
// per check, the challenge, a + 8 + 3 AES-CTR words (+ 36 with the
// probability's ρ₄ … ρ₆ and s_i), a = ⌈N/8⌉, and a + 8 squarings for
// α² and β²,
// and the sketch: 3N first differences, 4N multiply-accumulates of
// 64-bit words into 192-bit column sums (5N with the probability), and
// per sum 8 multiply-accumulates by β_l (β_l²) and one reduction — on
// AVX-512 IFMA a row of eight prefixes per vector, the column sums in
// the lanes, each 64-bit product from 7 multiply-adds of 52- and 12-bit
// limbs, 28 per row for the four sums of a 4-component vector; with the
// probability's five components the row transposed into its components
// once, their differences kept, and each check weighing the four it
// sums and the count's square (35 per row); and for an accepted report the fold of its count and label
// prefixes (and probability), one addition and a conditional one per
// element (Aggregate), on AVX-512 eight prefixes per vector. Measured
// figures: EXPERIMENTS.md, "Verified DCF" and "Tensor challenges".
//
// # Errors
//
// A rejection matches one of internal/verify's sentinel errors, so that a
// server counts both backends' rejections by verify.Reason: ErrMalformed
// (a share or message that does not decode, or not canonically),
// ErrMismatch (a well-formed key for the other server or another grid),
// ErrProof (the check value is not zero: the report does not encode one
// record). Replays (ErrReplay) are the server's to refuse by report ID.
//
// # What is not verified
//
// Validity is not truth: a party may report any bin and label. Replays:
// the nonce is the report ID, which the servers deduplicate, and a report
// copied under another ID fails ("Seeds"); but the same record encoded
// afresh under two IDs is two reports (there is no party authentication
// here).
//
// # Stability
//
// The report format, the seeds' expansion, the challenge derivation and
// the check are pinned by TestReportKnownAnswer (and the field DCF by fss
// TestGenFieldKnownAnswer); changing any of them is a breaking change:
// bump Version.
package vdcf
