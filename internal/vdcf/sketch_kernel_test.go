package vdcf

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// limbEdges are field elements at the vector kernels' edges: 0, 1, each
// side of the 52-bit limb split, 2^63 − 1, p − 2 and p − 1 (every limb
// at its largest).
var limbEdges = []fss.Fp{0, 1, 1<<52 - 1, 1 << 52, 1<<52 + 1, 1<<63 - 1, fss.Fp(fss.Modulus - 2), fss.Fp(fss.Modulus - 1)}

// TestSketchKernelEdges checks the sketch and the summed components kept
// (keptMatches), on every path
// (the vector kernels and the portable loops), against canonical field
// arithmetic, for 4- and 5-component vectors, on lengths that leave
// tails after the kernels' rows of 8 and span more than one of their
// blocks of 512 rows: vectors all 0, with every first difference p − 1
// (P(j) = p − 1 − j) under factors all p − 1 (every limb and the lane
// sums at their largest), drawn from the limb edges, and uniform; the
// tensor factors α, α², β, β² drawn apart (the kernels must not assume
// that one is the other's square).
func TestSketchKernelEdges(t *testing.T) {
	type gen struct {
		name   string
		vec    func(r *rand.Rand, j int) fss.Fp // P_c(j) of prefix j
		factor func(r *rand.Rand) fss.Fp
	}
	edge := func(r *rand.Rand) fss.Fp { return limbEdges[r.IntN(len(limbEdges))] }
	uniform := func(r *rand.Rand) fss.Fp { return fss.Fp(r.Uint64N(fss.Modulus)) }
	pm1 := func(*rand.Rand) fss.Fp { return fss.Fp(fss.Modulus - 1) }
	gens := []gen{
		{"zero", func(*rand.Rand, int) fss.Fp { return 0 }, uniform},
		{"differences p-1", func(_ *rand.Rand, j int) fss.Fp { return fss.Fp(fss.Modulus - 1 - uint64(j)) }, pm1},
		{"limb edges", func(r *rand.Rand, _ int) fss.Fp { return edge(r) }, edge},
		{"uniform", func(r *rand.Rand, _ int) fss.Fp { return uniform(r) }, uniform},
	}
	for _, accel := range accelPaths(t) {
		for _, prob := range []bool{false, true} {
			for _, bins := range []int{1, 7, 8, 9, 15, 1024, 1031, 4096, 4107} {
				f := newFixture(t, bins, 40)
				if prob {
					f = newProbFixture(t, bins, 40)
				}
				for _, g := range gens {
					t.Run(fmt.Sprintf("%s/m=%d/bins=%d/%s", accel.name, f.s.Components(), bins, g.name), func(t *testing.T) {
						accel.set(t)
						r := rand.New(rand.NewChaCha8([32]byte{byte(bins), byte(len(g.name))}))
						m := f.s.Components()
						vec := make([]fss.Fp, bins*m)
						for i := range vec {
							vec[i] = g.vec(r, i/m)
						}
						c := factorsOf(bins, func() fss.Fp { return g.factor(r) })
						sketchMatches(t, f.srv[0], vec, c)
						keptMatches(t, f.srv[0], vec, c)
					})
				}
			}
		}
	}
}

// factorsOf returns tensor factors for a vector of bins prefixes, each
// drawn by next.
func factorsOf(bins int, next func() fss.Fp) *coefficients {
	rows := (bins + tensorCols - 1) / tensorCols
	c := &coefficients{alpha: make([]fss.Fp, rows), alpha2: make([]fss.Fp, rows)}
	for h := range rows {
		c.alpha[h], c.alpha2[h] = next(), next()
	}
	for l := range tensorCols {
		c.beta[l], c.beta2[l] = next(), next()
	}
	return c
}

// sketchMatches compares v's sketch of vec under the factors c, for each
// check's MAC component, with its definition in canonical field
// arithmetic: x_i = Σ_j α_h·β_l·ΔP_{comps[i]}(j), q = Σ_j α²_h·β²_l·ΔC(j)
// (j = 8h + l) and the total count.
func sketchMatches(t *testing.T, v *Server, vec []fss.Fp, c *coefficients) {
	t.Helper()
	m, bins := v.s.Components(), v.s.Bins()
	for k := range checks {
		mac := v.s.macOf(k)
		comps := []int{int(payload.Count), int(payload.Label), mac}
		if v.s.prob {
			comps = append(comps, Probability)
		}
		want := sketch{x: make([]fss.Fp, len(comps)), total: vec[(bins-1)*m+int(payload.Count)]}
		for j := range bins {
			h, l := j/tensorCols, j%tensorCols
			for i, comp := range comps {
				d := vec[j*m+comp]
				if j > 0 {
					d = d.Sub(vec[(j-1)*m+comp])
				}
				want.x[i] = want.x[i].Add(c.alpha[h].Mul(c.beta[l]).Mul(d))
				if comp == int(payload.Count) {
					want.q = want.q.Add(c.alpha2[h].Mul(c.beta2[l]).Mul(d))
				}
			}
		}
		if got := v.sketchOf(vec, c, mac); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("check %d: sketch %v, want %v", k, got, want)
		}
	}
}

// keptMatches checks the summed components (Scheme.Summed) that the walk
// keeps of vec's runs, sketching them under the factors c (addRun) or
// not (keepRun, EvaluateSummed's), against vec's own.
func keptMatches(t *testing.T, v *Server, vec []fss.Fp, c *coefficients) {
	t.Helper()
	m, bins, comp := v.s.Components(), v.s.Bins(), v.s.Summed()
	for _, sketched := range []bool{false, true} {
		got := make([]fss.Fp, len(comp)*bins)
		chk := [checks]runCheck{{coef: c, mac: v.s.macOf(0)}, {coef: c, mac: v.s.macOf(1)}}
		var prev []fss.Fp
		for row := 0; row < bins; row += runLen {
			run := vec[row*m : min(row+runLen, bins)*m]
			if sketched {
				v.addRun(&chk, row, run, prev, got)
			} else {
				keepRun(got, bins, row, run, m, comp)
			}
			prev = run[len(run)-m:]
		}
		for k, cc := range comp {
			for j := range bins {
				if got[k*bins+j] != vec[j*m+int(cc)] {
					t.Fatalf("sketched %v: component %v kept at prefix %d: %d, want %d", sketched, cc, j, got[k*bins+j], vec[j*m+int(cc)])
				}
			}
		}
	}
}

// FuzzSketchKernel checks the sketch and the summed components kept of a
// vector read from
// the input (8-byte words reduced mod p, then zeros: the vector, then
// the tensor factors), on every path, against canonical field
// arithmetic: the first byte picks the vector's components (4 or 5), the
// second its length.
func FuzzSketchKernel(f *testing.F) {
	f.Add([]byte{0, 8})
	f.Add(append([]byte{1, 17}, make([]byte, 64)...))
	full := []byte{1, 23}
	for range 200 {
		full = binary.LittleEndian.AppendUint64(full, fss.Modulus-1)
	}
	f.Add(full)
	fixtures := map[[2]int]*fixture{}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		prob, bins := data[0]&1 == 1, 1+int(data[1]%40)
		fx := fixtures[[2]int{int(data[0] & 1), bins}]
		if fx == nil {
			fx = newFixture(t, bins, 41)
			if prob {
				fx = newProbFixture(t, bins, 41)
			}
			fixtures[[2]int{int(data[0] & 1), bins}] = fx
		}
		rest := data[2:]
		next := func() fss.Fp {
			var b [8]byte
			rest = rest[copy(b[:], rest):]
			return fss.Fp(binary.LittleEndian.Uint64(b[:]) % fss.Modulus)
		}
		vec := make([]fss.Fp, bins*fx.s.Components())
		for i := range vec {
			vec[i] = next()
		}
		c := factorsOf(bins, next)
		for _, accel := range accelPaths(t) {
			t.Run(accel.name, func(t *testing.T) {
				accel.set(t)
				sketchMatches(t, fx.srv[0], vec, c)
				keptMatches(t, fx.srv[0], vec, c)
			})
		}
	})
}
