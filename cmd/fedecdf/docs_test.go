package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// readmeTable returns the command paths ("bench fss") the README's
// Commands table lists: a cell "`fedecdf keygen`, `manifest`" names
// keygen and manifest.
func readmeTable(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n## Commands\n")
	if !ok {
		t.Fatal("the README has no Commands section")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	tick := regexp.MustCompile("`([^`]+)`")
	var paths []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.Contains(cells[1], "`fedecdf ") {
			continue
		}
		parent := ""
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			words := strings.Fields(m[1])
			if words[0] == "fedecdf" {
				words = words[1:]
				parent = strings.Join(words[:len(words)-1], " ")
			} else if parent != "" {
				words = append(strings.Fields(parent), words...)
			}
			paths = append(paths, strings.Join(words, " "))
		}
	}
	return paths
}

// The README's Commands table lists every command the binary has
// (shell completion included, help excluded), and nothing else.
func TestREADMECommandsTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := readmeTable(t, string(b))
	root := newRootCommand()
	root.InitDefaultCompletionCmd()
	// A group that runs itself (server) may be listed too.
	var have, groups []string
	for _, c := range commands(root) {
		if c.HasSubCommands() && c.Runnable() && !c.Hidden {
			groups = append(groups, strings.TrimPrefix(c.CommandPath(), "fedecdf "))
		}
		if c.Hidden || c.Name() == "help" || c.HasParent() && c.Parent().Name() == "completion" || c.HasSubCommands() {
			continue
		}
		have = append(have, strings.TrimPrefix(c.CommandPath(), "fedecdf "))
	}
	// A group's subcommands may be listed by the group alone (completion).
	have = append(have, "completion")
	for _, p := range listed {
		if !slices.Contains(have, p) && !slices.Contains(groups, p) {
			t.Errorf("the README's Commands table lists %q, which fedecdf does not have", p)
		}
	}
	for _, p := range have {
		if !slices.Contains(listed, p) {
			t.Errorf("the README's Commands table lacks fedecdf %s", p)
		}
	}
}

// flagRef is a long flag in prose: --name, not inside a word.
var flagRef = regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9]*(?:[.-][a-z0-9]+)*)`)

// allFlags returns the flags of every command of root, by name.
func allFlags(root *cobra.Command) map[string]bool {
	names := map[string]bool{"help": true, "version": true}
	for _, c := range append(commands(root), root) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	}
	return names
}

// Every flag the README mentions exists in some command, and every flag
// a command's help (Long and Example) mentions exists in that command,
// its parent group or its subcommands: renaming a flag fails here until
// the prose follows.
func TestDocsMentionOnlyExistingFlags(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	all := allFlags(newRootCommand())
	for _, m := range flagRef.FindAllStringSubmatch(string(b), -1) {
		if !all[m[1]] && !notFedecdfFlag[m[1]] {
			t.Errorf("the README mentions --%s, which no fedecdf command has", m[1])
		}
	}
	for _, c := range commands(newRootCommand()) {
		own := map[string]bool{"help": true}
		for _, k := range append(append(commands(c), c), c.Parent()) {
			k.Flags().VisitAll(func(f *pflag.Flag) { own[f.Name] = true })
			k.InheritedFlags().VisitAll(func(f *pflag.Flag) { own[f.Name] = true })
		}
		text := c.Long + "\n" + c.Example
		for _, ix := range flagRef.FindAllStringSubmatchIndex(text, -1) {
			name := text[ix[2]:ix[3]]
			if !own[name] && !(all[name] && namesOtherCommand(text[max(ix[0]-80, 0):ix[0]], c)) {
				t.Errorf("%s --help mentions --%s, which it does not have", c.CommandPath(), name)
			}
		}
	}
}

// notFedecdfFlag are flags of other programs the README shows.
var notFedecdfFlag = map[string]bool{
	"pwprompt": true, "owner": true, // createuser, createdb (PostgreSQL)
}

// namesOtherCommand says whether before, the text just before a flag in
// c's help, names another command (or a server role) the flag belongs
// to: "simulate's --score", "the leader's --peer-timeout".
func namesOtherCommand(before string, c *cobra.Command) bool {
	for _, o := range commands(c.Root()) {
		if o != c && strings.Contains(before, o.Name()) {
			return true
		}
	}
	return strings.Contains(before, "leader") || strings.Contains(before, "helper")
}

// query --help names the p-value hosmer prints: the noise-aware one,
// the naive χ²(G−2) one beside it.
func TestQueryHelpNamesNoiseAwarePValue(t *testing.T) {
	q, _, err := newRootCommand().Find([]string{"query"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q.Long, "H and its noise-aware p-value") || strings.Contains(q.Long, "p-value (χ² with G−2") {
		t.Errorf("query --help does not describe the noise-aware p-value hosmer prints:\n%s", q.Long)
	}
}
