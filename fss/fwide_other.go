//go:build !amd64 || purego

package fss

// wide4Accel reports whether the fused kernels run here: they
// need VAES and AVX-512 on amd64.
func wide4Accel() bool { return false }

// node4Kernel would run the fused inner-node step; newWide4 never sets
// up the fused path on this platform.
func node4Kernel(x *wide4, m, d int, st *fieldState, children *[2]fieldState, need [2]bool) uint64 {
	return 0
}

// leaf4Kernel would run the fused leaf step; newWide4 never sets up the
// fused path on this platform.
func leaf4Kernel(x *wide4, m int, st *fieldState, staged [][]Fp, at int, party uint64) uint64 {
	return 0
}
