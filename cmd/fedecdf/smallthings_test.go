package main

import (
	"strings"
	"testing"
)

// Numbers are read as CSV writers print them: Go literal syntax
// (digit separators, hexadecimal floats) is refused with the reason, a
// decimal comma is named as such, and ordinary decimals still read.
func TestNumbersAreCSVNotGoSyntax(t *testing.T) {
	args := func(path string) []string {
		return []string{"ecdf", "--input", path, "--min", "-10", "--max", "2000", "--bins", "16", "--interval-draws", "0"}
	}
	for name, c := range map[string]struct{ body, want string }{
		"digit separator": {"1\n1_000\n", `"1_000" is not a number: digit separators are Go syntax`},
		"hexadecimal":     {"1\n0x1p-1\n", `"0x1p-1" is not a decimal number`},
		"negative hex":    {"-0X10\n", `"-0X10" is not a decimal number`},
		"decimal comma":   {"value\n\"0,5\"\n", `"0,5" is not a number: a decimal comma? write 0.5`},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, "v.csv", c.body)
			a := args(path)
			if strings.HasPrefix(c.body, "value") {
				a = append(a, "--column", "value")
			}
			_, _, err := runCommandStderr(a...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	path := writeFile(t, "ok.csv", "1e3\n-0.5\n+2\n0.25\n07\n")
	if _, _, err := runCommandStderr(args(path)...); err != nil {
		t.Errorf("ordinary decimals: %v", err)
	}
}

// A single record outside the manifest's grid is refused before any
// upload: no "0 of 1 acknowledged" line, and the reason.
func TestPartySingleRecordValidatedFirst(t *testing.T) {
	m, _, _, dir := inProcessServers(t, 1, 1, "replace")
	manifest := dir + "/manifest.json"
	if err := m.Write(manifest); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCommandStderr("party", "--manifest", manifest, "--score-value", "1.5", "--label-value", "1")
	if err == nil || !strings.Contains(err.Error(), "nothing was uploaded") || !strings.Contains(err.Error(), "1.5") {
		t.Errorf("err = %v, want the record refused before upload", err)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing (no acknowledgement count)", out)
	}
}

func TestCountPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 reports"}, {1, "1 report"}, {2, "2 reports"}} {
		t.Run(c.want, func(t *testing.T) {
			if got := count(c.n, "report"); got != c.want {
				t.Errorf("count(%d) = %q, want %q", c.n, got, c.want)
			}
		})
	}
}
