package smooth

import (
	"container/heap"
	"slices"
)

// PointwiseL2 returns the non-decreasing curve z with 0 ≤ z_1 and z_N ≤ 1
// that minimises Σ (z_i − f_i)²: the pointwise p = 2 form of dp-ecdf
// Eq. 3, as the authors' code solves it.
//
// It runs the pool-adjacent-violators algorithm (O(N)) and clips the result
// to [0, 1]. Clipping is exact: for a separable convex loss the isotonic
// solution under constant bounds is the clipped unbounded one (Barlow,
// Bartholomew, Bremner and Brunk 1972, Thm 1.6, via the min–max formula
// z_i = max_{j≤i} min_{k≥i} mean(f_j..f_k)).
func PointwiseL2(f []float64) []float64 {
	type block struct {
		sum   float64
		count int
	}
	stack := make([]block, 0, len(f))
	for _, v := range f {
		stack = append(stack, block{v, 1})
		for len(stack) > 1 {
			a, b := stack[len(stack)-2], stack[len(stack)-1]
			if a.sum*float64(b.count) <= b.sum*float64(a.count) {
				break
			}
			stack = append(stack[:len(stack)-2], block{a.sum + b.sum, a.count + b.count})
		}
	}
	z := make([]float64, 0, len(f))
	for _, b := range stack {
		v := clip(b.sum / float64(b.count))
		for range b.count {
			z = append(z, v)
		}
	}
	return z
}

// PointwiseL1 returns a non-decreasing curve z in [0, 1] that minimises
// Σ |z_i − f_i|: the pointwise p = 1 form of dp-ecdf Eq. 3, exactly.
//
// It is the classic max-heap algorithm for L1 isotonic regression
// (O(N log N)): after reading f_1..f_i, the heap's maximum m_i is an
// optimal last value of the prefix problem; an optimal solution is then
// z_N = m_N, z_i = min(z_{i+1}, m_i). Clipping to [0, 1] is exact as for
// PointwiseL2 (the loss is separable and convex).
func PointwiseL1(f []float64) []float64 {
	h := make(maxHeap, 0, len(f))
	tops := make([]float64, len(f))
	for i, v := range f {
		heap.Push(&h, v)
		if h[0] > v {
			heap.Pop(&h)
			heap.Push(&h, v)
		}
		tops[i] = h[0]
	}
	z := slices.Clone(tops)
	for i := len(z) - 2; i >= 0; i-- {
		z[i] = min(z[i], z[i+1])
	}
	for i := range z {
		z[i] = clip(z[i])
	}
	return z
}

func clip(v float64) float64 { return min(max(v, 0), 1) }

type maxHeap []float64

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *maxHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
