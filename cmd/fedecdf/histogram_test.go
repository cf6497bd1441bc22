package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHistogram releases a hierarchical histogram of a small CSV with
// each mechanism and checks the printed guarantee and the shape of the
// levels, in text and JSON.
func TestHistogram(t *testing.T) {
	csv := writeFile(t, "ages.csv", "\"age\";\"job\"\n30;\"admin\"\n45;\"nurse\"\n61;\"retired\"\n38;\"admin\"\n")
	for _, mech := range []string{"auto", "counting-on-trees", "tree", "kary", "cascade", "gaussian-tree"} {
		args := []string{"histogram", "--input", csv, "--column", "age", "--min", "18", "--max", "95", "--bins", "27",
			"--arity", "3", "--delta", "1e-6", "--mechanism", mech, "--neighbours", "addremove"}
		out, err := runCommand(newRootCommand(), append(args, "--format", "json")...)
		if err != nil {
			t.Fatalf("%s: %v", mech, err)
		}
		var h histogramJSON
		if err := json.Unmarshal([]byte(out), &h); err != nil {
			t.Fatalf("%s: %v\n%s", mech, err, out)
		}
		if h.Depth != 4 || len(h.Levels) != 4 || h.Epsilon != 1 || h.Neighbours != "addremove" || h.Predicted <= 0 {
			t.Errorf("%s: %+v", mech, h)
		}
		for l, lv := range h.Levels {
			if want := []int{1, 3, 9, 27}[l]; len(lv.Counts) != want || len(lv.Upper) != want || lv.Upper[len(lv.Upper)-1] != 95 {
				t.Errorf("%s: level %d: %+v", mech, l, lv)
			}
		}
		text, err := runCommand(newRootCommand(), args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "-DP under addremove") || !strings.Contains(text, "level 3 (27 node(s) of 1 bin(s)):") {
			t.Errorf("%s: text\n%s", mech, text)
		}
	}
}

// TestHistogramErrors checks that bad requests are refused before any
// release, naming the flag at fault.
func TestHistogramErrors(t *testing.T) {
	csv := writeFile(t, "x.csv", "x\n1\n2\n")
	base := []string{"histogram", "--input", csv, "--column", "x"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--min and --max are required"},
		{[]string{"--min", "0", "--max", "3", "--alpha", "1"}, "--alpha 1"},
		{[]string{"--min", "0", "--max", "3", "--mechanism", "laplace"}, "unknown node-count mechanism"},
		{[]string{"--min", "0", "--max", "3", "--mechanism", "counting-on-trees"}, "delta 0"},
		{[]string{"--min", "0", "--max", "3", "--arity", "1"}, "arity 1"},
		{[]string{"--min", "0", "--max", "1"}, "--clamp"},
	} {
		if _, err := runCommand(newRootCommand(), append(base, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to name %q", c.args, err, c.want)
		}
	}
}
