package vdcf

// Preparation in one walk: each key's prefix vector is sketched and its
// summed components kept from the walk's runs while they are in cache
// (fss.PrefixDomain.FieldPrefixRuns), never held whole.

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
)

// Prepared is one report's preparation (Server.PrepareAll): its pending
// verification, its first message, and this server's shares of its
// summed components' prefixes, what an aggregate over Scheme.Summed
// adds once the report is accepted (Aggregate.AddSummed): component
// Summed()[k]'s prefix j at k·N + j.
type Prepared struct {
	Pending *Pending
	Message []byte
	Summed  []fss.Fp
}

// PrepareAll starts the verification of each report, nonces[i] and
// shares[i], in one walk of their keys (in lockstep,
// fss.PrefixDomain.FieldPrefixRuns): each key's prefix vector, this
// server's share of β_c·1[bin ≤ j] for every prefix j < N and component
// c < Scheme.Components, is sketched under the report's challenges (one
// per check, derived from the key and the nonce), and its summed
// components kept, from the runs the walk hands out while they are in
// cache, never written out whole (start: the checks' openings are the
// first message).
func (v *Server) PrepareAll(nonces [][NonceSize]byte, shares []*Share) ([]Prepared, error) {
	if len(nonces) != len(shares) {
		return nil, fmt.Errorf("vdcf: %d nonces for %d shares", len(nonces), len(shares))
	}
	w, err := v.walk(nonces, shares)
	if err != nil {
		return nil, err
	}
	defer v.release(w)
	out := make([]Prepared, len(shares))
	for i, sh := range shares {
		r := &w.reports[i]
		total := r.summed[v.s.bins-1] // the count (Scheme.Summed()[0]) at the highest prefix
		var sks [checks]sketch
		for k := range sks {
			sks[k] = v.sketchOfRuns(&r.chk[k])
			sks[k].total = total
		}
		p, msg := v.start(nonces[i], sh, r.coef, sks)
		out[i] = Prepared{Pending: p, Message: msg, Summed: r.summed}
	}
	return out, nil
}

// EvaluateSummed walks the keys of shares as PrepareAll does, keeping of
// each prefix vector only the summed components, laid out as
// Prepared.Summed, without sketching it.
func (v *Server) EvaluateSummed(shares []*Share) ([][]fss.Fp, error) {
	w, err := v.walk(nil, shares)
	if err != nil {
		return nil, err
	}
	defer v.release(w)
	out := make([][]fss.Fp, len(shares))
	for i := range out {
		out[i] = w.reports[i].summed
	}
	return out, nil
}

// release puts the walk's working memory back in the pool, keeping no
// output alive.
func (v *Server) release(w *walked) {
	for i := range w.reports {
		w.reports[i].summed = nil
	}
	v.walks.Put(w)
}

// walked is the working memory of one walk (Server.walk), reused
// through a pool: per report its runs' state, the challenges' row
// factors of all the reports and one challenge stream.
type walked struct {
	reports []reportRuns
	rows    []fss.Fp
	st      ctrStream
}

// reportRuns is one report's state in a walk: its checks' challenges
// and sketches taking shape, the last prefix of the run before and its
// summed components' prefixes.
type reportRuns struct {
	coef   [checks]coefficients
	chk    [checks]runCheck
	prev   [5]fss.Fp
	summed []fss.Fp
}

// walk walks the keys of shares, keeping each one's summed components
// and, with nonces, sketching it under its report's challenges.
func (v *Server) walk(nonces [][NonceSize]byte, shares []*Share) (*walked, error) {
	m, bins := v.s.Components(), v.s.bins
	summed := v.s.summed()
	for i, sh := range shares {
		if sh == nil {
			return nil, fmt.Errorf("vdcf: share %d is nil", i)
		}
	}
	w, _ := v.walks.Get().(*walked)
	if w == nil {
		w = &walked{}
	}
	if cap(w.reports) < len(shares) {
		w.reports = make([]reportRuns, len(shares))
	}
	w.reports = w.reports[:len(shares)]
	per := 2 * checks * tensorRows(bins)
	if nonces != nil && len(w.rows) < len(shares)*per {
		w.rows = make([]fss.Fp, len(shares)*per)
	}
	keys := make([]*fss.FieldKey, len(shares))
	for i, sh := range shares {
		keys[i] = sh.key
		r := &w.reports[i]
		*r = reportRuns{summed: make([]fss.Fp, len(summed)*bins)}
		if nonces != nil {
			r.coef = v.challengesIn(nonces[i], &w.st, w.rows[i*per:(i+1)*per])
			for k := range r.chk {
				r.chk[k] = runCheck{coef: &r.coef[k], mac: v.s.macOf(k)}
			}
		}
	}
	visit := func(i, row int, run []fss.Fp) {
		r := &w.reports[i]
		n := len(run) / m
		var prev []fss.Fp
		if row > 0 {
			prev = r.prev[:m]
		}
		if nonces != nil {
			v.addRun(&r.chk, row, run, prev, r.summed)
		} else {
			keepRun(r.summed, bins, row, run, m, summed)
		}
		copy(r.prev[:], run[(n-1)*m:])
	}
	if err := v.s.dom.FieldPrefixRuns(keys, visit); err != nil {
		v.release(w)
		return nil, fmt.Errorf("vdcf: %w", err)
	}
	return w, nil
}
