package vdcf

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

// TestSketchMatchesFieldArithmetic checks sketchOf, on every path
// (accelerations on and off), against the inner products computed with
// canonical field operations from r itself, on grids that leave tails
// after the vector kernel's rows of 8 and span more than one of its
// blocks, with elements near p (every limb and carry at its largest) and
// uniform ones.
func TestSketchMatchesFieldArithmetic(t *testing.T) {
	for _, accel := range accelPaths(t) {
		for _, bins := range []int{1, 7, 8, 9, 1024, 2053, 4103} {
			for _, prob := range []bool{false, true} {
				for _, near := range []bool{true, false} {
					t.Run(fmt.Sprintf("%s/bins=%d/probability=%v/near_p=%v", accel.name, bins, prob, near), func(t *testing.T) {
						accel.set(t)
						f := newFixture(t, bins, 30)
						if prob {
							f = newProbFixture(t, bins, 30)
						}
						rnd := rand.New(rand.NewChaCha8([32]byte{byte(bins)}))
						m := f.s.Components()
						vec := make([]fss.Fp, bins*m)
						for i := range vec {
							if near {
								vec[i] = fss.Fp(fss.Modulus - 1 - rnd.Uint64N(3))
							} else {
								vec[i] = fss.Fp(rnd.Uint64N(fss.Modulus))
							}
						}
						nonce := f.nonce()
						for k := range checks {
							c, r := challengeOf(f.srv[0], k, nonce)
							comps := []int{0, 1, f.s.macOf(k)}
							if prob {
								comps = append(comps, Probability)
							}
							got, want := f.srv[0].sketchOf(vec, &c, f.s.macOf(k)), referenceSketch(r, vec, m, comps)
							if fmt.Sprint(got) != fmt.Sprint(want) {
								t.Fatalf("check %d: sketch %v, want %v", k, got, want)
							}
						}
					})
				}
			}
		}
	}
}

// referenceSketch is the sketch from its definition under the challenge
// vector r: x_i = ⟨r, ΔP_{comps[i]}⟩ and q = ⟨r∘r, ΔP_Count⟩ with
// ΔP_c(j) = P_c(j) − P_c(j − 1).
func referenceSketch(r, vec []fss.Fp, m int, comps []int) sketch {
	bins := len(vec) / m
	s := sketch{x: make([]fss.Fp, len(comps)), total: vec[(bins-1)*m]}
	for j := range bins {
		for i, c := range comps {
			d := vec[j*m+c]
			if j > 0 {
				d = d.Sub(vec[(j-1)*m+c])
			}
			s.x[i] = s.x[i].Add(r[j].Mul(d))
			if c == 0 {
				s.q = s.q.Add(r[j].Mul(r[j]).Mul(d))
			}
		}
	}
	return s
}
