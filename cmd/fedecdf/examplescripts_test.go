package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scriptCommand matches a fedecdf command line of an example script:
// "$B" and its arguments up to the end of the shell command.
var scriptCommand = regexp.MustCompile(`\$B ([^;&|<>)\n]*)`)

// Every fedecdf command an example script under examples/ runs ($B is
// the binary) is one this binary has, with flags it knows: a renamed
// or removed command or flag fails here, not in an operator's run.
func TestExampleScriptsUseExistingFlags(t *testing.T) {
	scripts, err := filepath.Glob("../../examples/*.sh")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no script under examples/: %v", err)
	}
	for _, script := range scripts {
		t.Run(filepath.Base(script), func(t *testing.T) {
			b, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(b), "\\\n", " ")
			found := 0
			for _, m := range scriptCommand.FindAllStringSubmatch(text, -1) {
				words := strings.Fields(m[1])
				cmd, rest, err := newRootCommand().Find(words)
				if err != nil || cmd == newRootCommand() || cmd.Name() == "fedecdf" {
					t.Errorf("$B %s: no such command (%v)", m[1], err)
					continue
				}
				found++
				for _, w := range rest {
					name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
					if strings.HasPrefix(w, "--") && cmd.Flags().Lookup(name) == nil {
						t.Errorf("$B %s: fedecdf %s has no flag --%s", strings.Join(words, " "), cmd.Name(), name)
					}
				}
			}
			if found == 0 {
				t.Errorf("%s runs no fedecdf command", script)
			}
		})
	}
}
