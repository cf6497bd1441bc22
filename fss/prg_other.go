//go:build !amd64 || purego

package fss

func initAccel() {}

func prgExpandAccel(first, nk int, dst, src []block) bool { return false }

func prgSumAccel(first int, sums, src []block) bool { return false }
