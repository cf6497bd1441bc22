package mechanism

// RangeVariance returns the variance of the noise of the range sum
// prefix(to) − prefix(from), 0 ≤ from < to ≤ N (from = 0: prefix to
// alone, PrefixVariance(to)). Prefixes share noise variables, so this is
// not the sum of their variances: with the terms Σ_v a_v·η_v of prefix to
// and Σ_v b_v·η_v of prefix from,
//
//	Var = NodeVariance()·Σ_v (a_v − b_v)² + r(to) + r(from),
//
// where r(i) = PrefixVariance(i) − NodeVariance()·Σ_v a_v² is the part of
// a prefix's variance its terms do not carry (Cascade Sampling's
// rounding to integers; 0 for the tree and k-ary mechanisms), taken as
// independent between the two prefixes.
func RangeVariance(m Mechanism, from, to int) float64 {
	if from == 0 {
		return m.PrefixVariance(to)
	}
	coef := map[int]float64{}
	for _, t := range m.Terms(to, nil) {
		coef[t.Node] += t.Coef
	}
	for _, t := range m.Terms(from, nil) {
		coef[t.Node] -= t.Coef
	}
	var sq float64
	for _, c := range coef {
		sq += c * c
	}
	return m.NodeVariance()*sq + untermed(m, to) + untermed(m, from)
}

// untermed is the part of prefix i's variance outside its terms.
func untermed(m Mechanism, i int) float64 {
	var sq float64
	for _, t := range m.Terms(i, nil) {
		sq += t.Coef * t.Coef
	}
	return max(m.PrefixVariance(i)-m.NodeVariance()*sq, 0)
}
