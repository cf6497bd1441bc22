package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCommandStderr is runCommand also returning what the command wrote
// on its standard error.
func runCommandStderr(args ...string) (stdout, stderr string, err error) {
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

// The commands that release on a grid refuse one beyond maxBins, with
// the reason, before reading any data or spending any time.
func TestBinsCapped(t *testing.T) {
	over := "1048577"
	for name, args := range map[string][]string{
		"ecdf":     {"ecdf", "--input", "no-such-file.csv", "--min", "0", "--max", "1", "--bins", over},
		"simulate": {"simulate", "--bins", over},
		"manifest": {"manifest", "--bins", over, "--output", t.TempDir() + "/m.json"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCommandStderr(args...)
			if err == nil || !strings.Contains(err.Error(), "--bins 1048577 is more than 1048576") || !strings.Contains(err.Error(), "minutes and gigabytes") {
				t.Errorf("err = %v, want --bins refused with the reason", err)
			}
		})
	}
}

// ecdf --progress reports each phase on standard error when it is not a
// terminal, and nothing without it.
func TestECDFProgress(t *testing.T) {
	path := writeFile(t, "v.txt", "1\n2\n3\n4\n5\n")
	args := []string{"ecdf", "--input", path, "--min", "0", "--max", "6", "--bins", "8", "--interval-draws", "20", "--epsilon", "1"}
	_, stderr, err := runCommandStderr(append(args, "--progress")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"reading " + path + " done in", "releasing the ECDF of 5 values over 8 bins done in", "20 interval draws done in"} {
		if !strings.Contains(stderr, "fedecdf: "+phase) {
			t.Errorf("stderr %q lacks %q", stderr, phase)
		}
	}
	if _, stderr, err := runCommandStderr(args...); err != nil || stderr != "" {
		t.Errorf("without --progress: stderr %q, %v", stderr, err)
	}
}

func TestNoteSlowDraws(t *testing.T) {
	for _, c := range []struct {
		draws, prefixes int
		want            string
	}{
		{500, 1 << 20, "500 Monte-Carlo draws of the noise at 1048576 thresholds (about 1.1e+10 node draws)"},
		{500, 1024, ""},
		{0, 1 << 20, ""},
		{1 << 15, 1 << 10, "32768 Monte-Carlo draws"},
	} {
		var b strings.Builder
		noteSlowDraws(&b, c.draws, c.prefixes, c.prefixes)
		if got := b.String(); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("noteSlowDraws(%d, %d) = %q, want %q", c.draws, c.prefixes, got, c.want)
		}
	}
}
