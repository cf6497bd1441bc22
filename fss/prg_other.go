//go:build !amd64 || purego

package fss

func initAccel() {}

func prgNodeAccel(m int, seeds, left, right []block, valueFirst int, sums []block) bool {
	return false
}

func hashEachAccel(ka, kb int, seeds, a, b []block) bool { return false }

func hashNodeAccel(m int, seeds, left, right []block, values int, vals []block, stride int) bool {
	return false
}
