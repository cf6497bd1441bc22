package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// frontEnds are the packages whose errors are their user interface, as
// cmd/'s are: they may name fedecdf commands. internal/ui's pages show
// its errors to the analyst in the browser.
var frontEnds = []string{"internal/ui"}

// commands returns the names of fedecdf's commands: the first word of
// every Use field in cmd/fedecdf.
func commands(t *testing.T) []string {
	t.Helper()
	var names []string
	eachFile(t, filepath.Join("..", "..", "cmd", "fedecdf"), func(f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "Use" {
				if s, ok := literal(kv.Value); ok {
					if w := strings.Fields(s); len(w) > 0 && w[0] != "fedecdf" {
						names = append(names, w[0])
					}
				}
			}
			return true
		})
	})
	slices.Sort(names)
	return slices.Compact(names)
}

// commandMention matches a fedecdf command named in a text.
func commandMention(t *testing.T) *regexp.Regexp {
	t.Helper()
	cmds := commands(t)
	if len(cmds) < 5 {
		t.Fatalf("found only the commands %v in cmd/fedecdf", cmds)
	}
	return regexp.MustCompile(`\bfedecdf (` + strings.Join(cmds, "|") + `)\b`)
}

// errorTexts returns the texts f gives to the error constructors.
func errorTexts(f *ast.File) []string {
	var texts []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || !errorConstructors[pkg.Name+"."+sel.Sel.Name] {
			return true
		}
		for _, arg := range call.Args {
			if s, ok := literal(arg); ok {
				texts = append(texts, s)
			}
		}
		return true
	})
	return texts
}

// eachFile parses the non-test Go files of dir.
func eachFile(t *testing.T, dir string, fn func(*ast.File)) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		fn(f)
	}
}

// literal returns the value of a string literal or of a concatenation
// of them.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		a, ok := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok && ok2
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

// errorConstructors are the calls whose string arguments become an
// error's text.
var errorConstructors = map[string]bool{"fmt.Errorf": true, "errors.New": true, "errcode.New": true, "protocol.Refusalf": true}

// TestNoCommandsInLibraryErrors: no error a library package makes (its
// text given to fmt.Errorf, errors.New, errcode.New or
// protocol.Refusalf) names a fedecdf command: the advice a user needs
// is cmd/fedecdf's (hint.go), which maps the typed errors to it.
func TestNoCommandsInLibraryErrors(t *testing.T) {
	mention := commandMention(t)
	for _, p := range packages(t) {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok || p.DepOnly || strings.HasPrefix(rel, "cmd/") || slices.Contains(frontEnds, rel) {
			continue
		}
		eachFile(t, p.Dir, func(f *ast.File) {
			for _, s := range errorTexts(f) {
				if m := mention.FindString(s); m != "" {
					t.Errorf("%s: an error names %q: give it a type, and its hint to cmd/fedecdf/hint.go: %q", rel, m, s)
				}
			}
		})
	}
}

// TestCommandMentionFound: TestNoCommandsInLibraryErrors sees a command
// named in an error's text, even split over a concatenation, and not
// the word fedecdf alone.
func TestCommandMentionFound(t *testing.T) {
	src := `package p

func f(err error) error {
	_ = fmt.Errorf("%w: is ` + "`" + `fedecdf " + "server --role leader` + "`" + ` running?", err)
	_ = errors.New("this fedecdf reads format 3")
	return errcode.New(1, "fedecdf query --release ID")
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	mention := commandMention(t)
	var found []string
	for _, s := range errorTexts(f) {
		found = append(found, mention.FindString(s))
	}
	if want := []string{"fedecdf server", "", "fedecdf query"}; !slices.Equal(found, want) {
		t.Errorf("found %q, want %q", found, want)
	}
}
