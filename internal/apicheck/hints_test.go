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

// adviceAllowed are the error types, by package, whose text may still
// name a fedecdf command. p2p's DialError reaches the user as text from
// the other server too (fedecdf status shows the leader's last dial of
// the helper, and the servers log it), where no command line can add a
// hint to a typed error; moving its advice needs its cause typed in the
// status message.
var adviceAllowed = map[string]string{"internal/p2p": "DialError"}

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

// errorTexts returns the texts f gives to the error constructors, and
// to fmt.Sprintf in the methods of its error types (a receiver whose
// type's name ends in Error), which build an Error() text; each with the
// name of its error type ("" outside one).
func errorTexts(f *ast.File) (texts, types []string) {
	for _, decl := range f.Decls {
		typ := ""
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
			if name := receiverName(fn.Recv.List[0].Type); strings.HasSuffix(name, "Error") {
				typ = name
			}
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if name := pkg.Name + "." + sel.Sel.Name; !errorConstructors[name] && (typ == "" || name != "fmt.Sprintf") {
				return true
			}
			for _, arg := range call.Args {
				if s, ok := literal(arg); ok {
					texts, types = append(texts, s), append(types, typ)
				}
			}
			return true
		})
	}
	return texts, types
}

// receiverName is the name of a receiver's type, without its pointer.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
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
			texts, types := errorTexts(f)
			for k, s := range texts {
				if m := mention.FindString(s); m != "" && (types[k] == "" || adviceAllowed[rel] != types[k]) {
					t.Errorf("%s: an error names %q: give it a type, and its hint to cmd/fedecdf/hint.go: %q", rel, m, s)
				}
			}
		})
	}
}

// TestCommandMentionFound: TestNoCommandsInLibraryErrors sees a command
// named in an error's text, even split over a concatenation or built by
// an error type's method, and not the word fedecdf alone.
func TestCommandMentionFound(t *testing.T) {
	src := `package p

func f(err error) error {
	_ = fmt.Errorf("%w: is ` + "`" + `fedecdf " + "server --role leader` + "`" + ` running?", err)
	_ = errors.New("this fedecdf reads format 3")
	_ = fmt.Sprintf("fedecdf status")
	return errcode.New(1, "fedecdf query --release ID")
}

func (e *DownError) hint() string { return fmt.Sprintf("start fedecdf server --role %s", e.Peer) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	mention := commandMention(t)
	texts, types := errorTexts(f)
	var found []string
	for k, s := range texts {
		found = append(found, types[k]+":"+mention.FindString(s))
	}
	if want := []string{":fedecdf server", ":", ":fedecdf query", "DownError:fedecdf server"}; !slices.Equal(found, want) {
		t.Errorf("found %q, want %q", found, want)
	}
}
