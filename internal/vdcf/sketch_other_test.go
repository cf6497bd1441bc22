//go:build !amd64 || purego

package vdcf

import "testing"

// accelPath is a way to run the sketch and the aggregate: set turns it on for
// one test.
type accelPath struct {
	name string
	set  func(t *testing.T)
}

// accelPaths are the scalar loops alone.
func accelPaths(*testing.T) []accelPath {
	return []accelPath{{"scalar", func(*testing.T) {}}}
}
