//go:build !amd64 || purego

package fss

func initAccel() {}

func prgExpandAccel(first, nk int, dst, src []uint64, stride, n int) bool { return false }
