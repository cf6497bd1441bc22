package fss

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// rejectingSeeds have a PRG word not below p (found by searching 2^33
// and more seeds; TestFieldWalkResamplesRealRejectedWords checks that
// they still have it): value word q of a node, 2j or 2j + 1 of H_{1+j}.
// Words 0 … 3 are also a leaf's at m = 4, 4 … 7 the right child's; word
// 4 is also a leaf's at m = 5. At an m = 5 inner node the right child's
// words 5 … 9 straddle H_3 … H_5 and the kernel splices them: 5 and 6,
// 7 and 8 each make one pair of components, 9 is alone; word 8 is only
// there. No seed has another of the ten words ≥ p, so that each one
// tests the resampling of its word alone.
var rejectingSeeds = []struct {
	seed block
	word int
}{
	{block{0x2937f5ac8, 0x5eed0f7e1ec7ed}, 3},
	{block{0x2cc171304, 0x5eed0f7e1ec7ed}, 0},
	{block{0x2008a5979d6, 0x5eed0f7e1ec7ed}, 4},
	{block{0x657658416, 0x5eed0f7e1ec7ed}, 6},
	{block{0x74ebc5602, 0x5eed0f7e1ec7ed}, 9},
	{block{0xc3975db7e, 0x5eed0f7e1ec7ed}, 5},
	{block{0xb33c25384, 0x5eed0f7e1ec7ed}, 7},
	{block{0xa2c19a2dc, 0x5eed0f7e1ec7ed}, 8},
}

// TestFieldWalkResamplesRealRejectedWords checks the field walker, with
// each acceleration, against EvalField for keys whose walks meet a PRG
// word ≥ p at the root, at inner nodes and at leaves, on the fused path
// (keys 0 … 63 of 70 with VAES and AVX-512: an inner node in each group
// of 32) and the generic one (keys 64 … 69), at m = 4 and m = 5, from
// real AES output rather than forceResample: without resampling those
// keys' shares would differ.
func TestFieldWalkResamplesRealRejectedWords(t *testing.T) {
	for i, rs := range rejectingSeeds {
		var words [10]uint64
		streamWords(rs.seed, 1, 5, words[:])
		if rejected(words[rs.word]) == 0 {
			t.Fatalf("seed %d: word %d = %#x is below p", i, rs.word, words[rs.word])
		}
		for q, w := range words {
			if q != rs.word && rejected(w) != 0 {
				t.Fatalf("seed %d: word %d = %#x is ≥ p too", i, q, w)
			}
		}
	}
	const n, keys = 6, 70
	points := make([]uint64, 1<<n)
	for x := range points {
		points[x] = uint64(x)
	}
	for _, accel := range accelerations() {
		for _, tc := range []struct{ m, party int }{{4, 0}, {4, 1}, {5, 0}, {5, 1}} {
			m, party := tc.m, tc.party
			for si, rs := range rejectingSeeds {
				t.Run(fmt.Sprintf("%s/m=%d/party=%d/seed=%d", accel.name, m, party, si), func(t *testing.T) {
					defer accel.use()()
					r := rand.New(testRand(uint64(93 + 2*si + party)))
					fk := make([]*FieldKey, keys)
					for i := range fk {
						fk[i] = randomFieldKey(t, r, n, m, party)
					}
					fk[3].k.seed = rs.seed // the root
					for _, at := range []struct{ key, depth int }{{20, 2}, {37, n}, {50, 2}, {65, 3}, {66, n}} {
						for !steerToSeed(&fk[at.key].k, at.depth, rs.seed) {
							fk[at.key] = randomFieldKey(t, r, n, m, party)
						}
					}
					checkAgainstEvalField(t, fk, points, false, 1)
				})
			}
		}
	}
}

// randomFieldKey returns the key of party of a random comparison.
func randomFieldKey(t *testing.T, r *rand.Rand, n, m, party int) *FieldKey {
	t.Helper()
	k0, k1, err := GenField(r.Uint64N(1<<n), randomFieldBeta(r, m), n, testRand(r.Uint64()))
	if err != nil {
		t.Fatal(err)
	}
	return [2]*FieldKey{k0, k1}[party]
}

// steerToSeed rewrites the seed correction of level depth−1 of k so that
// the node at depth on the path of x = 0 has the given seed (with a
// clear least significant bit), and reports whether it could: the
// correction applies only where the control bit at depth − 1 is 1.
func steerToSeed(k *Key, depth int, target block) bool {
	v := [2][]Fp{make([]Fp, k.m), make([]Fp, k.m)}
	s, t := k.seed, uint64(k.party)
	for d := 0; d < depth-1; d++ {
		seeds, ts := expandFieldNode(s, k.m, v)
		cw := k.cw[d*k.stride():]
		s = block{seeds[0][0] ^ cw[0]&-t, seeds[0][1] ^ cw[1]&-t}
		t = ts[0] ^ t&(k.tcw[0]>>uint(d))&1
	}
	if t == 0 {
		return false
	}
	var out [1]block
	hashEach(0, 0, []block{s}, out[:], nil)
	cw := k.cw[(depth-1)*k.stride():]
	cw[0], cw[1] = (out[0][0]^target[0])&^1, out[0][1]^target[1]
	return true
}
