package mechanism

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// katSeed is the fixed release seed of the known-answer tests.
var katSeed = sha256.Sum256([]byte("fedecdf known-answer seed"))

// releaseTranscript returns the SHA-256 of the prefix noises
// PrefixNoise(1), …, PrefixNoise(N) of m's release for seed, each as 8
// little-endian bytes.
func releaseTranscript(m Mechanism, seed [32]byte) string {
	rel := m.NewRelease(seed)
	h := sha256.New()
	var b [8]byte
	for i := 1; i <= m.Bins(); i++ {
		binary.LittleEndian.PutUint64(b[:], uint64(rel.PrefixNoise(i)))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestMechanismKnownAnswers pins the stability contract seed → node
// streams → node noise → prefix noise of every mechanism (see the
// package documentation, Stability): a release of 37 prefixes from a
// fixed seed must give the transcript recorded here. A failure means
// that old releases, whose seeds servers keep, would now get new noise:
// that is a versioned, breaking change, never a reason to update the
// constants alone. (The constants were recorded when noise became eager
// and calibrations were rounded up; every transcript whose scale did not
// change equals the one of the lazily drawn releases before.)
func TestMechanismKnownAnswers(t *testing.T) {
	const unit = 1 << 32
	for _, c := range []struct {
		name string
		p    Params
		want string
	}{
		{"tree/replace", Params{Name: "tree", Epsilon: 0.7}, "06f121863c2449cd809c1981c26d713a39060b71f67f1b7b3e1d2eff0a6b9207"},
		{"tree/addremove", Params{Name: "tree", Epsilon: 0.7, Relation: AddRemove}, "d5eca1b312d94614380a3d9700ce1b19acccd27ab7a970dd4db1f04a3ee15053"},
		{"tree/addremove/eps=1", Params{Name: "tree", Epsilon: 1, Relation: AddRemove}, "5b87348e09d383e8e8b4352eac5a62fcd7ea252c02a62e59af4b023892e769f0"},
		{"tree/addremove/unit=2^32", Params{Name: "tree", Epsilon: 0.7, Relation: AddRemove, Unit: unit}, "cfb7b011063cdb4e5f7133978429a67f73aec34b772498f5afe92863b385516c"},
		{"kary(k=2)/replace", Params{Name: "kary", K: 2, Epsilon: 0.7}, "bb60546bfcff176f0586054450db336cc7857efcb16e2850072226051dfff188"},
		{"kary(k=2)/addremove", Params{Name: "kary", K: 2, Epsilon: 0.7, Relation: AddRemove}, "0baf37bc2da1c70b536edec194ce59de6f7baba71572fb397a39f2f790c37030"},
		{"kary(k=3)/replace", Params{Name: "kary", K: 3, Epsilon: 0.7}, "bb2faae1eb2ce8d9ffb1017533bb5efa3fd8630cb8e5fb11704a0afd20e1bafa"},
		{"kary(k=3)/addremove", Params{Name: "kary", K: 3, Epsilon: 0.7, Relation: AddRemove}, "ff9c301edaa7a93f0d97ab2af165a9dc24aa3cf936257962d8de4e80d931fca9"},
		{"kary(k=3)/addremove/unit=2^32", Params{Name: "kary", K: 3, Epsilon: 0.7, Relation: AddRemove, Unit: unit}, "3d27e0beebc4ea168a9fc632a33ad8a8e311daa2d2c6c236f8c88b178f6cb7cc"},
		{"kary(k=4)/replace", Params{Name: "kary", K: 4, Epsilon: 0.7}, "d68e414f6cfbde27d84bafe0f55d8bf937a5fed6341beeb991846be026fb7b2b"},
		{"kary(k=4)/addremove", Params{Name: "kary", K: 4, Epsilon: 0.7, Relation: AddRemove}, "6d844e08d794e4f31d0bea328105ffb035d3dec15645565b7f2969528a930620"},
		{"kary(k=16)/replace", Params{Name: "kary", K: 16, Epsilon: 0.7}, "c04dba6d2a4a6e3241f13ccad15426f9014ed9d93f07cf3d293b668741a21e7d"},
		{"kary(k=16)/addremove", Params{Name: "kary", K: 16, Epsilon: 0.7, Relation: AddRemove}, "21f9beba39f6cd39612ee2dc1a01fca638f7d429f3055ed5d7d28d5272144190"},
		{"kary(k=2,l2)/replace", Params{Name: "kary", K: 2, Epsilon: 0.5, Delta: 0.05}, "4aa1f937281cd61780fc5faf002abc928ac00f39e3bc22fcc8b342c491ce31ee"},
		{"kary(k=2,l2)/replace/unit=2^32", Params{Name: "kary", K: 2, Epsilon: 0.5, Delta: 0.05, Unit: unit}, "45a5a26bd7cea6a4f49d2b8df937d780d3f6f8edf7942e8e8a93e6ffee6dfb6e"},
		{"cascade/replace", Params{Name: "cascade", Epsilon: 0.7, Delta: 1e-6}, "1bcbd6bfdc3099d448b5505c4ab42c9d6c65c6ac4c2b9474ad99fb81e8aaaec0"},
		{"cascade/addremove", Params{Name: "cascade", Epsilon: 0.7, Delta: 1e-6, Relation: AddRemove}, "7d25bed4d8b37afbf9f4b2d4d03306ae0f476edb2cc9abb706ccd556d9cd46bf"},
		{"cascade/addremove/unit=2^32", Params{Name: "cascade", Epsilon: 0.7, Delta: 1e-6, Relation: AddRemove, Unit: unit}, "93243079d13be5ebcdfc10c66d3b27be84fd31f0e14e73ba7a921bbfe6ef6c8e"},
		{"gaussian-tree/replace", Params{Name: "gaussian-tree", Epsilon: 0.7, Delta: 1e-6}, "432c44c3fb77b096fa54757a430c88494b0ce4d76a14ec2ff047265a8369ee0f"},
		{"gaussian-tree/addremove", Params{Name: "gaussian-tree", Epsilon: 0.7, Delta: 1e-6, Relation: AddRemove}, "f29e1316640885d1ea0fc40f860ce70ee32b5fb1a058c87960bc98c4a91ecccf"},
		{"partitioned/replace", Params{Name: "partitioned", Epsilon: 0.7}, "1beb76f58c8b8020a894ea7bd1472d1bf90e062b0cc940b60c614ad758806f0e"},
		{"partitioned/addremove", Params{Name: "partitioned", Epsilon: 0.7, Relation: AddRemove}, "1ec728fde6d93c0f70e5dc5489897fc0d5e2e43d9ca5092ebb0e6ff901901d75"},
		{"partitioned/addremove/unit=2^32", Params{Name: "partitioned", Epsilon: 0.7, Relation: AddRemove, Unit: unit}, "4ad2b10ec06b7faabe49c64cec4c61b8cb666f98405fe7700c9bf52f3f6ec7d7"},
		{"gaussian-tree/addremove/unit=2^32", Params{Name: "gaussian-tree", Epsilon: 0.7, Delta: 1e-6, Relation: AddRemove, Unit: unit}, "bfc902f92d13b996f7189bb602ad8640c2610da76ec11e808d0ba3d7b15ebbe4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.Bins = 37
			m, err := New(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := releaseTranscript(m, katSeed); got != c.want {
				t.Errorf("%s: transcript SHA-256 %s, want %s: the seed → noise derivation changed, a versioned, breaking change (package documentation, Stability)", m.Name(), got, c.want)
			}
		})
	}
}
