//go:build !amd64 || purego

package fss

// accelerations is the one PRG loop of this platform: the portable one.
func accelerations() []accel {
	return []accel{{"portable", func() func() { return func() {} }}}
}
