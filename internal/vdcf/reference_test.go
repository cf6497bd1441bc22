package vdcf

// The reference of the servers' fused walk (prepare.go): the prefix
// vectors written out whole (Evaluate), then sketched (Prepare,
// sketches) and added to an aggregate whole (addVector), as the tests
// compare the fused path with.

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Evaluate is the reference the fused walk (PrepareAll, EvaluateSummed)
// is tested equal to: per share, this server's share of the report's
// prefix vector, written out whole: out[i][j·m + c] is its share of β_c·1[bin ≤ j] for every prefix
// j < bins, m = Scheme.Components (fss.PrefixDomain.FieldPrefixes, one
// tree walk per key, keys in lockstep).
func (v *Server) Evaluate(shares []*Share) ([][]fss.Fp, error) {
	keys := make([]*fss.FieldKey, len(shares))
	out := make([][]fss.Fp, len(shares))
	for i, sh := range shares {
		keys[i] = sh.key
		out[i] = make([]fss.Fp, v.s.bins*v.s.Components())
	}
	if err := v.s.dom.FieldPrefixes(keys, out); err != nil {
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	return out, nil
}

// runLen is the length of the runs sketches cuts a whole vector into,
// as fss.PrefixDomain.FieldPrefixRuns hands them: from prefix 0 up,
// each starting at a multiple of runLen (of tensorCols: whole rows of
// the challenge tensor).
const runLen = 32

// sketchOf computes the sketch of a prefix vector under one check's
// challenge c and MAC component mac (sketches, both checks under c).
func (v *Server) sketchOf(prefixes []fss.Fp, c *coefficients, mac int) sketch {
	sks := v.sketches(prefixes, &[checks]coefficients{*c, *c})
	for k := range checks {
		if v.s.macOf(k) == mac {
			return sks[k]
		}
	}
	panic("vdcf: sketchOf: no check has MAC component " + fmt.Sprint(mac)) // unreachable: callers pass macOf(k)
}

// sketches computes the sketch of a prefix vector under each check's
// challenge: with r_j = α_h·β_l (j = 8h + l) and ΔP(j) = P(j) − P(j − 1),
//
//	⟨r, ΔP⟩ = Σ_l β_l·Σ_h α_h·ΔP(h, l),  ⟨r∘r, ΔP⟩ = Σ_l β_l²·Σ_h α_h²·ΔP(h, l),
//
// the inner sums per column, accumulated unreduced from the vector's
// runs as the servers' walk hands them (addRun), the outer ones 8
// products per sum (package doc, "Tensor challenges").
func (v *Server) sketches(prefixes []fss.Fp, coef *[checks]coefficients) [checks]sketch {
	m := v.s.Components()
	bins := len(prefixes) / m
	var chk [checks]runCheck
	for k := range chk {
		chk[k] = runCheck{coef: &coef[k], mac: v.s.macOf(k)}
	}
	var prev []fss.Fp
	for row := 0; row < bins; row += runLen {
		run := prefixes[row*m : min(row+runLen, bins)*m]
		v.addRun(&chk, row, run, prev, nil)
		prev = run[len(run)-m:]
	}
	var sks [checks]sketch
	for k := range sks {
		sks[k] = v.sketchOfRuns(&chk[k])
		sks[k].total = prefixes[len(prefixes)-m+int(payload.Count)]
	}
	return sks
}

// Prepare is the reference PrepareAll is tested equal to: the
// verification of one report started from this server's share and its
// whole prefix vector (Evaluate), sketched run by run as the walk hands
// them out (sketches), its first message and pending verification
// those of start.
func (v *Server) Prepare(nonce [NonceSize]byte, sh *Share, prefixes []fss.Fp) (*Pending, []byte, error) {
	m := v.s.Components()
	if len(prefixes) != v.s.bins*m {
		return nil, nil, fmt.Errorf("vdcf: prefix vector of %d elements, want %d bins × %d components", len(prefixes), v.s.bins, m)
	}
	sc := v.bufs.Get().(*scratch)
	defer v.bufs.Put(sc)
	coef := v.challenges(nonce, sc)
	sks := v.sketches(prefixes, &coef)
	p, msg := v.start(nonce, sh, coef, sks)
	return p, msg, nil
}

// addVector adds a whole prefix vector of the scheme s (bins ×
// Scheme.Components elements) to the sums of a, an aggregate of s over
// the components comp (NewAggregate), component by component: the
// reference of Aggregate.AddSummed of its summed components.
func addVector(s *Scheme, comp []payload.Component, a *Aggregate, vec []fss.Fp) {
	m := s.Components()
	vec = vec[:s.bins*m]
	for k, c := range comp {
		sum := a.sum[k*s.bins : (k+1)*s.bins]
		for j := range sum {
			sum[j] = fss.AddLazy(sum[j], vec[j*m+int(c)])
		}
	}
}
