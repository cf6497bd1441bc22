package vdcf

// The sketch taken from a prefix vector's runs: the servers' walk hands
// each key's shares in runs of consecutive prefixes, from the highest to
// the lowest (fss.PrefixDomain.FieldPrefixRuns), and each run is
// sketched, and its summed components kept, while it is in cache; a
// whole vector is sketched as the same runs (sketchOf).

import (
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// runLen is the length of the runs sketchOf cuts a whole vector into,
// as fss.PrefixDomain.FieldPrefixRuns hands them: from the highest
// prefixes down, every run but the highest starting at a multiple of
// runLen (a multiple of tensorCols: whole rows of the challenge tensor).
const runLen = 16

// limbAcc holds the IFMA kernels' lane sums of one check
// (tensor4IFMA's first 12 rows, tensor5IFMA's 18), added to the column
// sums (drain) before they can overflow.
type limbAcc [18][8]uint64

// runCheck is one check's sketch of one report taking shape from its
// runs: the kernels' lane sums, the number of rows they hold, and the
// column sums.
type runCheck struct {
	coef *coefficients
	mac  int
	acc  limbAcc
	rows int
	cols columns
}

// comps is the component of each sum of the check's sketch (−1: none;
// the square's is the count's).
func (v *Server) comps(mac int) [sumLen]int {
	comps := [sumLen]int{sumCount: int(payload.Count), sumLabel: int(payload.Label), sumMAC: mac, sumSquare: -1, sumProb: -1}
	if v.s.prob {
		comps[sumProb] = Probability
	}
	return comps
}

// addRun adds to the check's sums the prefixes row … row + n − 1 of a
// run, run[i·m + c] = P_c(row + i), n = len(run)/m: their first
// differences, P(row − 1) taken as 0, and, if the run is not the
// highest, the term −P(row + n − 1) of the first difference at row + n,
// which the run above it left out. Whole rows of the challenge tensor
// go to the IFMA kernel where the CPU has it, in blocks that keep its
// lane sums from overflowing, the rest to the scalar loops.
func (v *Server) addRun(rc *runCheck, row int, run []fss.Fp) {
	m := v.s.Components()
	n := len(run) / m
	above := row+n < v.s.bins
	rows := 0 // whole tensor rows the kernel took
	if row%tensorCols == 0 {
		rows = n / tensorCols
	}
	tail := false // the kernel took the term at row + n
	for lo := 0; lo < rows; {
		k := min(tensorBlock-1, rows-lo)
		last := lo+k == rows
		t := above && last && n == rows*tensorCols
		if rc.rows+k+1 > tensorBlock {
			rc.acc.drain(m, rc.mac, &rc.cols)
			rc.rows = 0
		}
		var prev []fss.Fp
		if lo > 0 {
			prev = run[m*(tensorCols*lo-1):][:m]
		}
		h := row/tensorCols + lo
		if !tensorKernel(run[m*tensorCols*lo:], prev, rc.coef.alpha[h:], rc.coef.alpha2[h:], k, m, rc.mac, t, &rc.acc) {
			rows = 0
			break
		}
		if rc.rows += k; t {
			rc.rows++
		}
		lo, tail = lo+k, t
	}
	comps := v.comps(rc.mac)
	rc.cols.scalar(run, row, rows*tensorCols, rc.coef, m, comps)
	if above && !tail {
		rc.cols.boundary(run[(n-1)*m:], row+n, rc.coef, comps)
	}
}

// sketchOfRuns returns the check's sketch once every run is added, the total
// count apart.
func (v *Server) sketchOfRuns(rc *runCheck) sketch {
	rc.acc.drain(v.s.Components(), rc.mac, &rc.cols)
	rc.rows = 0
	c, cols := rc.coef, &rc.cols
	s := sketch{
		x: []fss.Fp{cols.dot(sumCount, &c.beta), cols.dot(sumLabel, &c.beta), cols.dot(sumMAC, &c.beta)},
		q: cols.dot(sumSquare, &c.beta2),
	}
	if v.s.prob {
		s.x = append(s.x, cols.dot(sumProb, &c.beta))
	}
	return s
}

// boundary adds to the column sums the term −P(j − 1) of the first
// difference at prefix j, prev = P(j − 1) (its m components), for the
// components comps[d] of the sums d.
func (cols *columns) boundary(prev []fss.Fp, j int, c *coefficients, comps [sumLen]int) {
	h, l := j/tensorCols, j%tensorCols
	for d, comp := range comps {
		a := c.alpha[h]
		switch {
		case d == sumSquare:
			a, comp = c.alpha2[h], comps[sumCount]
		case comp < 0:
			continue
		}
		cols[d][l] = cols[d][l].addMul(a, prev[comp].Neg())
	}
}

// drain adds the lane sums of the kernel of m-component vectors to the
// column sums cols (of the check whose MAC is component mac) and clears
// them: for m = 4 sum d's parts are acc[3d … 3d+2] (count, label, MAC,
// square); for m = 5 acc[3k … 3k+2] are the parts of words 8k … 8k+7 of
// a row, word g being component g mod 5 of column ⌊g/5⌋ (the second
// MAC's dropped), and acc[15 … 17] the square's.
func (acc *limbAcc) drain(m, mac int, cols *columns) {
	switch m {
	case 4:
		for d, sum := range [4]int{sumCount, sumLabel, sumMAC, sumSquare} {
			for l := range tensorCols {
				cols[sum][l] = cols[sum][l].addLimbs(acc[3*d][l], acc[3*d+1][l], acc[3*d+2][l])
			}
		}
	case 5:
		sumOf := [5]int{-1, -1, -1, -1, -1} // component → sum
		sumOf[payload.Count], sumOf[payload.Label], sumOf[mac], sumOf[Probability] = sumCount, sumLabel, sumMAC, sumProb
		for g := range m * tensorCols { // word g of a row: register g/8, lane g%8
			if d := sumOf[g%m]; d >= 0 {
				z := acc[3*(g/8):]
				cols[d][g/m] = cols[d][g/m].addLimbs(z[0][g%8], z[1][g%8], z[2][g%8])
			}
		}
		for l := range tensorCols {
			cols[sumSquare][l] = cols[sumSquare][l].addLimbs(acc[15][l], acc[16][l], acc[17][l])
		}
	}
	*acc = limbAcc{}
}

// scalar adds to the column sums the prefixes from − … of a run,
// run[i·m + c] = P_c(row + i), P(row − 1) taken as 0, for the components
// comps[d] of the sums d (−1: none; the square's is the count's).
func (cols *columns) scalar(run []fss.Fp, row, from int, c *coefficients, m int, comps [sumLen]int) {
	n := len(run) / m
	at := func(i, comp int) fss.Fp { // P_comp(row + i), 0 before the run
		if i < 0 {
			return 0
		}
		return run[i*m+comp]
	}
	cc, lc, mc := comps[sumCount], comps[sumLabel], comps[sumMAC]
	for l := range tensorCols {
		first := from + (l-(row+from)%tensorCols+tensorCols)%tensorCols // (row + first) mod b = l
		var count, label, mac, sq wide
		for i := first; i < n; i += tensorCols {
			h := (row + i) / tensorCols
			a := c.alpha[h]
			dc := run[i*m+cc].Sub(at(i-1, cc))
			count = count.addMul(a, dc)
			sq = sq.addMul(c.alpha2[h], dc)
			label = label.addMul(a, run[i*m+lc].Sub(at(i-1, lc)))
			mac = mac.addMul(a, run[i*m+mc].Sub(at(i-1, mc)))
		}
		cols[sumCount][l] = cols[sumCount][l].add(count)
		cols[sumLabel][l] = cols[sumLabel][l].add(label)
		cols[sumMAC][l] = cols[sumMAC][l].add(mac)
		cols[sumSquare][l] = cols[sumSquare][l].add(sq)
		if pc := comps[sumProb]; pc >= 0 { // a second loop: the first one's sums stay in registers
			var prob wide
			for i := first; i < n; i += tensorCols {
				prob = prob.addMul(c.alpha[(row+i)/tensorCols], run[i*m+pc].Sub(at(i-1, pc)))
			}
			cols[sumProb][l] = cols[sumProb][l].add(prob)
		}
	}
}
