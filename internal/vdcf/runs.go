package vdcf

// The sketch taken from a prefix vector's runs: the servers' walk hands
// each key's shares in runs of consecutive prefixes, from prefix 0 up
// (fss.PrefixDomain.FieldPrefixRuns), and each run is sketched, and its
// summed components kept, while it is in cache.

import (
	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// tensorBlock is the most rows whose sums the kernels' lane sums take
// before they are drained, so that they cannot overflow: per row a
// lane's part gains below 3·2^52, and 3·2^52·512 < 2^64.
const tensorBlock = 512

// limbAcc holds the IFMA kernels' lane sums of one check
// (tensor4IFMA's first 12 rows, tensor5IFMA's 15), added to the column
// sums (drain) before they can overflow.
type limbAcc [15][8]uint64

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

// addRun adds to both checks' sums the prefixes row … row + n − 1 of a
// run, run[i·m + c] = P_c(row + i), n = len(run)/m, and prev =
// P(row − 1) (its m components; nil for 0 at row 0): their first
// differences; and, if summed is not nil, copies the run's summed
// components (Scheme.Summed) there, component k's prefix j at k·N + j.
// Whole rows of the challenge tensor go to the IFMA kernel where the CPU
// has it, both checks and the copy in one call per block of rows that
// keeps its lane sums from overflowing, the rest to the scalar loops
// (the copy's to keepRun).
func (v *Server) addRun(chk *[checks]runCheck, row int, run, prev, summed []fss.Fp) {
	m := v.s.Components()
	n := len(run) / m
	rows := 0 // whole tensor rows the kernel took
	if row%tensorCols == 0 {
		rows = n / tensorCols
	}
	for lo := 0; lo < rows; {
		k := min(tensorBlock, rows-lo)
		if chk[0].rows+k > tensorBlock {
			for c := range chk {
				chk[c].acc.drain(m, &chk[c].cols)
				chk[c].rows = 0
			}
		}
		if lo > 0 {
			prev = run[m*(tensorCols*lo-1):][:m]
		}
		var out [3][]fss.Fp
		if summed != nil {
			out = keepAt(summed, v.s.bins, row+tensorCols*lo, m)
		}
		if ok, _ := tensorKernel(run[m*tensorCols*lo:], prev, chk, row/tensorCols+lo, k, m, out); !ok {
			rows = 0
			break
		}
		for c := range chk {
			chk[c].rows += k
		}
		lo += k
	}
	if summed != nil { // the kernel kept the whole rows it took
		kept := rows * tensorCols
		keepRun(summed, v.s.bins, row+kept, run[kept*m:], m, v.s.summed())
	}
	if rows*tensorCols < n {
		if rows > 0 {
			prev = run[m*(tensorCols*rows-1):][:m]
		}
		for c := range chk {
			chk[c].cols.scalar(run, prev, row, rows*tensorCols, chk[c].coef, m, v.comps(chk[c].mac))
		}
	}
}

// keepAt returns where the summed components of prefix at go in a
// vector laid out as Prepared.Summed (bins prefixes per component), for
// an m-component scheme (m − 2 summed components: Scheme.Summed).
func keepAt(summed []fss.Fp, bins, at, m int) (out [3][]fss.Fp) {
	for k := range m - 2 {
		out[k] = summed[k*bins+at:]
	}
	return out
}

// keepRun is keep by the vector kernel (keepKernel) for the whole rows
// of a run starting at a row of the challenge tensor, where the CPU has
// it, and by keep for the rest.
func keepRun(dst []fss.Fp, bins, row int, run []fss.Fp, m int, summed []payload.Component) {
	n, kept := len(run)/m, 0
	if rows := n / tensorCols; row%tensorCols == 0 && keepKernel(run, rows, m, keepAt(dst, bins, row, m)) {
		kept = rows * tensorCols
	}
	if kept < n {
		keep(dst, bins, row+kept, run[kept*m:], m, summed)
	}
}

// keep copies the summed components of a run of prefixes row, row + 1,
// … of an m-component vector (run[i·m + c] = P_c(row + i)) to dst,
// component summed[k]'s prefix j at k·bins + j.
func keep(dst []fss.Fp, bins, row int, run []fss.Fp, m int, summed []payload.Component) {
	n := len(run) / m
	for k, c := range summed {
		out := dst[k*bins+row:][:n]
		in := run[c:]
		for j := range out {
			out[j] = in[j*m]
		}
	}
}

// sketchOfRuns returns the check's sketch once every run is added, the total
// count apart.
func (v *Server) sketchOfRuns(rc *runCheck) sketch {
	rc.acc.drain(v.s.Components(), &rc.cols)
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

// drain adds the lane sums of the kernel of m-component vectors to the
// column sums cols and clears them: sum d's parts are acc[3d … 3d+2]
// (count, label, MAC, square), and for m = 5 the probability's
// acc[12 … 14].
func (acc *limbAcc) drain(m int, cols *columns) {
	for d, sum := range [4]int{sumCount, sumLabel, sumMAC, sumSquare} {
		for l := range tensorCols {
			cols[sum][l] = cols[sum][l].addLimbs(acc[3*d][l], acc[3*d+1][l], acc[3*d+2][l])
		}
	}
	if m == 5 {
		for l := range tensorCols {
			cols[sumProb][l] = cols[sumProb][l].addLimbs(acc[12][l], acc[13][l], acc[14][l])
		}
	}
	*acc = limbAcc{}
}

// scalar adds to the column sums the prefixes from − … of a run,
// run[i·m + c] = P_c(row + i), prev = P(row + from − 1) (nil: 0), for the
// components comps[d] of the sums d (−1: none; the square's is the
// count's).
func (cols *columns) scalar(run, prev []fss.Fp, row, from int, c *coefficients, m int, comps [sumLen]int) {
	n := len(run) / m
	at := func(i, comp int) fss.Fp { // P_comp(row + i)
		switch {
		case i >= from:
			return run[i*m+comp]
		case prev == nil:
			return 0
		}
		return prev[comp]
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
