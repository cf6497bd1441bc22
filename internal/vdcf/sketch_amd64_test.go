//go:build amd64 && !purego

package vdcf

import "testing"

// sketchPath is a way to run the sketch: set turns it on for one test.
type sketchPath struct {
	name string
	set  func(t *testing.T)
}

// sketchPaths are the scalar sketch and, where the CPU has it, IFMA.
func sketchPaths(t *testing.T) []sketchPath {
	with := func(on bool) func(t *testing.T) {
		return func(t *testing.T) {
			old := useIFMA
			useIFMA = on
			t.Cleanup(func() { useIFMA = old })
		}
	}
	paths := []sketchPath{{"scalar", with(false)}}
	if useIFMA {
		paths = append(paths, sketchPath{"ifma", with(true)})
	} else {
		t.Log("no AVX-512 IFMA: the vector sketch is not tested here")
	}
	return paths
}
