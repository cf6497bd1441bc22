package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeLong also runs the README's long commands, which `go test ./...`
// skips to stay fast: go test ./cmd/fedecdf -run READMEExamples -readme.long
var readmeLong = flag.Bool("readme.long", false, "also run the README's long commands (bench cost, experiment, audit)")

// readmeCommand is one fedecdf command line of the README's sh blocks.
type readmeCommand struct {
	line  string   // as written
	args  []string // after "fedecdf"
	stdin string   // made by a "seq A B |" before it
}

// readmeCommands extracts the fedecdf command lines of the ```sh blocks
// of the README at path: "go run ./cmd/fedecdf" is read as "fedecdf",
// continuation lines are joined, comments dropped, and "seq A B | "
// becomes the command's standard input.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seq := regexp.MustCompile(`^seq (\d+) (\d+) \| `)
	var cmds []readmeCommand
	for i, block := range strings.Split(string(b), "```sh\n") {
		if i == 0 {
			continue
		}
		block, _, _ = strings.Cut(block, "```")
		block = strings.ReplaceAll(block, "\\\n", " ")
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if j := strings.Index(line, " #"); j >= 0 {
				line = strings.TrimSpace(line[:j])
			}
			line = strings.ReplaceAll(line, "go run ./cmd/fedecdf", "fedecdf")
			c := readmeCommand{line: line}
			if m := seq.FindStringSubmatch(line); m != nil {
				lo, _ := strconv.Atoi(m[1])
				hi, _ := strconv.Atoi(m[2])
				var in strings.Builder
				for k := lo; k <= hi; k++ {
					fmt.Fprintln(&in, k)
				}
				c.stdin, line = in.String(), line[len(m[0]):]
			}
			if words := exampleCommands(line); len(words) == 1 && strings.HasPrefix(line, "fedecdf") {
				c.args = words[0]
				cmds = append(cmds, c)
			}
		}
	}
	return cmds
}

// readmeSkip says why a README command is not run here, or "". The rules:
//   - deployment commands (keygen, manifest, server, party, query, status, demo,
//     ui) need several processes or machines, or serve until stopped:
//     TestPartyCSVRerunStoresEachRowOnce, TestQuery*, TestDemo and TestUI*
//     run them against loopback deployments;
//   - a command reading ../shared/data when that directory is missing;
//   - unless -readme.long is given, long runs: bench cost at its
//     defaults, experiment, audit.
//
// Lines that do not run fedecdf (go build, go test) are not commands.
func readmeSkip(args []string) string {
	switch args[0] {
	case "keygen", "manifest", "server", "party", "query", "status", "demo", "ui":
		return "deployment command"
	}
	for _, a := range args {
		if strings.HasPrefix(a, "../shared/data/") {
			if _, err := os.Stat(filepath.Dir(a)); err != nil {
				return "no " + filepath.Dir(a)
			}
		}
	}
	if *readmeLong {
		return ""
	}
	switch args[0] {
	case "experiment", "audit":
		return "long run (-readme.long)"
	case "bench":
		if len(args) == 2 && args[1] == "cost" {
			return "long run (-readme.long)"
		}
	}
	return ""
}

// TestREADMEExamples runs the README's fedecdf commands as written, from
// the repository root, in-process (readmeSkip lists what it skips); the
// files they write (--out, --plot) go to a temporary directory.
func TestREADMEExamples(t *testing.T) {
	cmds := readmeCommands(t, "../../README.md")
	if len(cmds) < 10 {
		t.Fatalf("only %d fedecdf commands found in the README", len(cmds))
	}
	t.Chdir("../..")
	ran := 0
	for _, c := range cmds {
		if why := readmeSkip(c.args); why != "" {
			t.Logf("skipped (%s): %s", why, c.line)
			continue
		}
		ran++
		t.Run(strings.Join(c.args[:1], "_"), func(t *testing.T) {
			args := append([]string(nil), c.args...)
			for k := 1; k < len(args); k++ {
				if args[k-1] == "--out" || args[k-1] == "--plot" {
					args[k] = filepath.Join(t.TempDir(), filepath.Base(args[k]))
				}
			}
			root := newRootCommand()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(io.Discard)
			root.SetIn(strings.NewReader(c.stdin))
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Errorf("%s: %v", c.line, err)
			}
		})
	}
	if ran == 0 {
		t.Error("no README command ran")
	}
}
