//go:build !amd64 || purego

package fss

func initAccel() {}

func mmoAccel(k int, dst, src []uint64) bool { return false }
