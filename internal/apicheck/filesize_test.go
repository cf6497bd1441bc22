package apicheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file of the packages in
// splitPackages may have: one role per file (server, the verified DCF and
// the simulation were split by role and step; see ARCHITECTURE.md).
const maxFileLines = 600

// splitPackages are the directories, relative to the module, held to
// maxFileLines.
var splitPackages = []string{"server", "internal/vdcf", "simulate"}

// longFiles returns the non-test .go files of dir with more than max
// lines, each with its count.
func longFiles(dir string, max int) (map[string]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	long := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		if n > max {
			long[name] = n
		}
	}
	return long, nil
}

// TestFileLength: no non-test Go file of server, internal/vdcf or
// simulate exceeds maxFileLines lines.
func TestFileLength(t *testing.T) {
	for _, pkg := range splitPackages {
		long, err := longFiles(filepath.Join("..", "..", filepath.FromSlash(pkg)), maxFileLines)
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range long {
			t.Errorf("%s/%s has %d lines, more than %d: split it by role (one role per file)", pkg, name, n, maxFileLines)
		}
	}
}

// TestLongFilesFindsOne: longFiles reports a file one line over the
// limit, and neither one at the limit nor a long test file.
func TestLongFilesFindsOne(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines int) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("//\n", lines)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("over.go", 11)
	write("at.go", 10)
	write("long_test.go", 50)
	write("notes.txt", 50)
	long, err := longFiles(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) != 1 || long["over.go"] != 11 {
		t.Fatalf("longFiles = %v, want only over.go with 11 lines", long)
	}
}
