//go:build !amd64 || purego

package vdcf

import "testing"

// sketchPath is a way to run the sketch: set turns it on for one test.
type sketchPath struct {
	name string
	set  func(t *testing.T)
}

// sketchPaths is the scalar sketch alone.
func sketchPaths(*testing.T) []sketchPath {
	return []sketchPath{{"scalar", func(*testing.T) {}}}
}
