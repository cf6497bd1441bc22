package smooth

// PointwiseL2 returns the non-decreasing curve z with 0 ≤ z_1 and z_N ≤ 1
// that minimises Σ (z_i − f_i)²: the pointwise p = 2 form of dp-ecdf
// Eq. 3, as the authors' code solves it.
//
// It runs the pool-adjacent-violators algorithm (O(N)) and clips the result
// to [0, 1]; the package documentation proves that clipping the unbounded
// isotonic fit gives the bounded optimum exactly. f must be finite (Apply
// checks it).
func PointwiseL2(f []float64) []float64 {
	z := make([]float64, 0, len(f))
	for _, b := range pava(f) {
		v := b.value()
		for range b.count {
			z = append(z, v)
		}
	}
	// Adjacent block means are ordered exactly as products, but each
	// division rounds: lift the one-ulp decreases that can remain.
	return nonDecreasing(z)
}

// pavaBlock is a block of pooled points: count of them, summing to sum.
type pavaBlock struct {
	sum   float64
	count int
}

// value is the block's mean clipped to [0, 1].
func (b pavaBlock) value() float64 { return clip(b.sum / float64(b.count)) }

// pava pools adjacent violators of f: the blocks of its unbounded
// isotonic fit, in order.
func pava(f []float64) []pavaBlock {
	stack := make([]pavaBlock, 0, len(f))
	for _, v := range f {
		stack = append(stack, pavaBlock{v, 1})
		for len(stack) > 1 {
			a, b := stack[len(stack)-2], stack[len(stack)-1]
			if a.sum*float64(b.count) <= b.sum*float64(a.count) {
				break
			}
			stack = append(stack[:len(stack)-2], pavaBlock{a.sum + b.sum, a.count + b.count})
		}
	}
	return stack
}

// pointwiseL1 returns a non-decreasing curve z in [0, 1] that minimises
// Σ |z_i − f_i|: the pointwise p = 1 form of dp-ecdf Eq. 3, exactly.
//
// It is the classic max-heap algorithm for L1 isotonic regression
// (O(N log N)): after reading f_1..f_i, the heap's maximum m_i is an
// optimal last value of the prefix problem; an optimal solution is then
// z_N = m_N, z_i = min(z_{i+1}, m_i). Clipping to [0, 1] is exact as for
// PointwiseL2 (the loss is separable and convex). f must be finite.
func pointwiseL1(f []float64) []float64 {
	h := make(maxHeap, 0, len(f))
	z := make([]float64, len(f))
	for i, v := range f {
		h.push(v)
		if h[0] > v {
			h.replaceTop(v)
		}
		z[i] = h[0]
	}
	for i := len(z) - 2; i >= 0; i-- {
		z[i] = min(z[i], z[i+1])
	}
	for i := range z {
		z[i] = clip(z[i])
	}
	return z
}

func clip(v float64) float64 { return min(max(v, 0), 1) }

// maxHeap is a binary max-heap of float64 (no interface boxing, unlike
// container/heap).
type maxHeap []float64

func (h *maxHeap) push(v float64) {
	*h = append(*h, v)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent] >= s[i] {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

// replaceTop replaces the maximum by v and restores the heap order.
func (h maxHeap) replaceTop(v float64) {
	h[0] = v
	for i := 0; ; {
		largest := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && h[c] > h[largest] {
				largest = c
			}
		}
		if largest == i {
			return
		}
		h[i], h[largest] = h[largest], h[i]
		i = largest
	}
}
