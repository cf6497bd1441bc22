package simulate

// smooth post-processes the private curve (free under DP): the least-
// squares non-decreasing fit (pool adjacent violators, the p = 2 pointwise
// smoothing of dp-ecdf Eq. 3) clipped to [0, 1].
func smooth(f []float64) ([]float64, string) {
	type block struct {
		sum   float64
		count int
	}
	var stack []block
	for _, v := range f {
		stack = append(stack, block{v, 1})
		for len(stack) > 1 {
			a, b := stack[len(stack)-2], stack[len(stack)-1]
			if a.sum/float64(a.count) <= b.sum/float64(b.count) {
				break
			}
			stack = append(stack[:len(stack)-2], block{a.sum + b.sum, a.count + b.count})
		}
	}
	out := make([]float64, 0, len(f))
	for _, b := range stack {
		v := min(max(b.sum/float64(b.count), 0), 1)
		for range b.count {
			out = append(out, v)
		}
	}
	return out, "isotonic (PAVA) + clip to [0,1]"
}
