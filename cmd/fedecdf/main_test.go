package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// redirectStd points os.Stdout and os.Stderr at a temporary file until
// the test ends, and returns a function reading what was written there.
func redirectStd(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "std")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = f, f
	t.Cleanup(func() {
		os.Stdout, os.Stderr = stdout, stderr
		f.Close()
	})
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}

// TestCommandsHelp: every subcommand says what it does (Short, and Long
// or Example) and prints its help, with that text, into the writer the
// command was given, leaving the process's standard output and error
// alone.
func TestCommandsHelp(t *testing.T) {
	for _, c := range commands(newRootCommand()) {
		args := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			if c.Short == "" {
				t.Error("no Short")
			}
			if c.Long == "" && c.Example == "" {
				t.Error("neither Long nor Example")
			}
			written := redirectStd(t)
			var out bytes.Buffer
			root := newRootCommand()
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(append(args, "--help"))
			if err := root.Execute(); err != nil {
				t.Fatalf("--help: %v", err)
			}
			help := out.String()
			want := c.Long
			if want == "" {
				want = c.Short
			}
			for _, w := range []string{"Usage:", strings.TrimSpace(want), c.Example} {
				if !strings.Contains(help, w) {
					t.Errorf("help lacks %q:\n%s", w, help)
				}
			}
			if s := written(); s != "" {
				t.Errorf("--help wrote to os.Stdout or os.Stderr:\n%s", s)
			}
		})
	}
}

// flagSample is a valid value, different from any default, of each
// flag type the commands use.
var flagSample = map[string]string{
	"string": "x", "stringSlice": "x", "bool": "true", "int": "7", "intSlice": "7",
	"uint64": "7", "float64": "0.5", "float64Slice": "0.5", "duration": "2s",
}

// TestCommandsShareNoFlags: each constructor binds its flags to
// variables of its own, so setting every flag of one command tree leaves
// another tree's flags at their defaults.
func TestCommandsShareNoFlags(t *testing.T) {
	set, other := commands(newRootCommand()), commands(newRootCommand())
	for i, c := range set {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			v, ok := flagSample[f.Value.Type()]
			if !ok {
				t.Fatalf("%s --%s: no sample value of type %s", c.CommandPath(), f.Name, f.Value.Type())
			}
			if err := f.Value.Set(v); err != nil {
				t.Fatalf("%s --%s %s: %v", c.CommandPath(), f.Name, v, err)
			}
		})
		t.Run(strings.Join(strings.Fields(c.CommandPath())[1:], "_"), func(t *testing.T) {
			other[i].Flags().VisitAll(func(f *pflag.Flag) {
				if got := f.Value.String(); got != f.DefValue {
					t.Errorf("--%s is %s, not its default %s, after the other tree's was set", f.Name, got, f.DefValue)
				}
			})
		})
	}
}

// runRoot runs "fedecdf args…" in-process and returns its standard
// output.
func runRoot(args ...string) (string, error) { return runCommand(newRootCommand(), args...) }

// TestUnknownSubcommand: an unknown command, at the top or under a
// group such as bench, is an error naming it (a non-zero exit), while
// a group alone prints its help.
func TestUnknownSubcommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"foo"}, `unknown command "foo" for "fedecdf"`},
		{[]string{"bench", "foo"}, `unknown command "foo" for "fedecdf bench"`},
		{[]string{"bench"}, ""},
		{nil, ""},
	} {
		t.Run(strings.Join(append([]string{"fedecdf"}, c.args...), "_"), func(t *testing.T) {
			out, err := runRoot(c.args...)
			if c.err == "" {
				if err != nil || !strings.Contains(out, "Usage:") {
					t.Fatalf("%v, output:\n%s\nwant the help", err, out)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%v, want an error with %q", err, c.err)
			}
		})
	}
}

// TestVersion: --version prints the module version (and the VCS
// revision when the build recorded one) and succeeds.
func TestVersion(t *testing.T) {
	out, err := runRoot("--version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "fedecdf " + version() + "\n"; out != want || version() == "" {
		t.Fatalf("--version printed %q, want %q", out, want)
	}
}

// exampleCommands returns the fedecdf command lines of an Example text,
// continuation lines joined and each split into words as a shell would
// (single and double quotes; no expansions).
func exampleCommands(example string) [][]string {
	var lines [][]string
	text := strings.ReplaceAll(example, "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "| fedecdf "); i >= 0 {
			line = line[i+2:]
		}
		if !strings.HasPrefix(line, "fedecdf ") && line != "fedecdf" {
			continue
		}
		var words []string
		var w strings.Builder
		var quote rune
		inWord := false
		for _, r := range line {
			switch {
			case quote != 0 && r == quote:
				quote = 0
			case quote != 0:
				w.WriteRune(r)
			case r == '\'' || r == '"':
				quote, inWord = r, true
			case r == ' ':
				if inWord {
					words = append(words, w.String())
					w.Reset()
					inWord = false
				}
			default:
				w.WriteRune(r)
				inWord = true
			}
		}
		if inWord {
			words = append(words, w.String())
		}
		lines = append(lines, words[1:])
	}
	return lines
}

// TestCommandsHaveExamples: every command's help has an Examples
// section, and each fedecdf line of it names an existing command with
// flags it accepts and values they parse, and positional arguments only
// where the command takes them.
func TestCommandsHaveExamples(t *testing.T) {
	root := newRootCommand()
	for _, c := range append(commands(root), root) {
		t.Run(strings.ReplaceAll(c.CommandPath(), " ", "_"), func(t *testing.T) {
			lines := exampleCommands(c.Example)
			if len(lines) == 0 {
				t.Fatalf("no example running fedecdf in %q", c.Example)
			}
			for _, args := range lines {
				fresh := newRootCommand()
				sub, rest, err := fresh.Find(args)
				if err != nil {
					t.Errorf("fedecdf %s: %v", strings.Join(args, " "), err)
					continue
				}
				sub.InitDefaultHelpFlag()
				sub.InitDefaultVersionFlag()
				if err := sub.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
					t.Errorf("fedecdf %s: %v", strings.Join(args, " "), err)
					continue
				}
				if sub.Args != nil && !sub.Flags().Changed("help") && !sub.Flags().Changed("version") {
					if err := sub.Args(sub, sub.Flags().Args()); err != nil {
						t.Errorf("fedecdf %s: %v", strings.Join(args, " "), err)
					}
				}
			}
		})
	}
}
