package apicheck

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// versionRow is a row of ARCHITECTURE.md's table of versioned formats.
type versionRow struct {
	contract string
	pkg      string   // the test cell's package, relative to the module
	tests    []string // the test cell's test functions
	ident    string   // the version cell's identifier, "pkg.Name" or "name" of pkg
	value    string   // its value in parentheses, a Go literal; "" when none
	labels   []string // the other quoted strings of the version cell
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	quoted     = regexp.MustCompile(`"[^"]*"`)
	// identValue matches the version cell's first identifier and the
	// literal that opens its parenthesis: `protocol.Version` (11),
	// `verdictRecordVersion` (3; …), `vdcf.Version` ("fedecdf/vdcf v6").
	identValue = regexp.MustCompile("^`([A-Za-z_][A-Za-z0-9_.]*)`(?: \\((\"[^\"]*\"|0x[0-9a-fA-F]+|[0-9]+)[;,)])?")
)

// versionRows reads the table of versioned formats (the rows after the
// "| contract | test | version |" header) of ARCHITECTURE.md.
func versionRows(t *testing.T) []versionRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| contract | test | version |\n|---|---|---|\n")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no table of versioned formats")
	}
	var rows []versionRow
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			break
		}
		r := versionRow{contract: strings.TrimSpace(cells[0])}
		for k, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if k == 0 {
				r.pkg = m[1]
			} else {
				r.tests = append(r.tests, m[1])
			}
		}
		version := strings.TrimSpace(cells[2])
		if m := identValue.FindStringSubmatch(version); m != nil {
			r.ident, r.value = m[1], m[2]
		}
		for _, q := range quoted.FindAllString(version, -1) {
			if q != r.value {
				r.labels = append(r.labels, q[1:len(q)-1])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("ARCHITECTURE.md's table of versioned formats has no rows")
	}
	return rows
}

// parseFiles parses the named files of dir.
func parseFiles(t *testing.T, fset *token.FileSet, dir string, names []string) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// value returns the Go value of the package-level name in files, type
// checked with imp: a constant's value or, for a variable, that of its
// initialiser when constant or len of a package-level composite literal
// (store.SchemaVersion = len(migrations)).
func value(fset *token.FileSet, files []*ast.File, imp types.Importer, name string) (constant.Value, error) {
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	pkg, err := (&types.Config{Importer: imp}).Check("p", fset, files, info)
	if err != nil {
		return nil, err
	}
	switch o := pkg.Scope().Lookup(name).(type) {
	case *types.Const:
		return o.Val(), nil
	case *types.Var:
		if v := initOf(files, name); v != nil {
			if tv := info.Types[v]; tv.Value != nil {
				return tv.Value, nil
			}
			if call, ok := v.(*ast.CallExpr); ok && len(call.Args) == 1 && types.ExprString(call.Fun) == "len" {
				if lit, ok := initOf(files, types.ExprString(call.Args[0])).(*ast.CompositeLit); ok {
					return constant.MakeInt64(int64(len(lit.Elts))), nil
				}
			}
		}
		return nil, fmt.Errorf("cannot evaluate the variable %s", name)
	case nil:
		return nil, fmt.Errorf("no constant or variable %s", name)
	default:
		return nil, fmt.Errorf("%s is not a constant or variable", name)
	}
}

// initOf returns the initialiser of the package-level name in files.
func initOf(files []*ast.File, name string) ast.Expr {
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for k, n := range vs.Names {
					if n.Name == name && k < len(vs.Values) {
						return vs.Values[k]
					}
				}
			}
		}
	}
	return nil
}

// checkVersion compares the row's value with that of the identifier in
// files, parsed into fset (the identifier's package).
func checkVersion(r versionRow, fset *token.FileSet, files []*ast.File, imp types.Importer) error {
	name := r.ident[strings.LastIndex(r.ident, ".")+1:]
	got, err := value(fset, files, imp, name)
	if err != nil || r.value == "" {
		return err
	}
	kind := token.INT
	if strings.HasPrefix(r.value, `"`) {
		kind = token.STRING
	}
	want := constant.MakeFromLiteral(r.value, kind, 0)
	if got.Kind() != want.Kind() || !constant.Compare(got, token.EQL, want) {
		return fmt.Errorf("ARCHITECTURE.md says %s is %s, the code says %s", r.ident, r.value, got.ExactString())
	}
	return nil
}

// missingLabels returns those of labels that no string literal of files
// is.
func missingLabels(files []*ast.File, labels []string) []string {
	have := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					have[v] = true
				}
			}
			return true
		})
	}
	var missing []string
	for _, l := range labels {
		if !have[l] {
			missing = append(missing, l)
		}
	}
	return missing
}

// testFuncs returns the names of the Test functions of files.
func testFuncs(files []*ast.File) map[string]bool {
	names := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				names[fn.Name.Name] = true
			}
		}
	}
	return names
}

// TestVersionsTableMatchesCode: every row of ARCHITECTURE.md's table of
// versioned formats names tests that exist in its package, the version
// constant (or variable) it names exists with the value the row says,
// and the other strings it quotes (info strings, labels) are string
// literals of its package or the constant's.
func TestVersionsTableMatchesCode(t *testing.T) {
	all := packages(t)
	imp := exportImporter(all)
	byName := map[string][]string{} // package name → module-relative paths
	for _, p := range all {
		if rel, ok := strings.CutPrefix(p.ImportPath, module+"/"); ok && !p.DepOnly {
			byName[p.Name] = append(byName[p.Name], rel)
		}
	}
	for _, r := range versionRows(t) {
		t.Run(r.contract, func(t *testing.T) {
			if r.pkg == "" {
				t.Fatal("the row names no package")
			}
			p, ok := all[module+"/"+r.pkg]
			if !ok {
				t.Fatalf("no package %s", r.pkg)
			}
			tests := testFuncs(parseFiles(t, token.NewFileSet(), p.Dir, append(slices.Clone(p.TestGoFiles), p.XTestGoFiles...)))
			for _, name := range r.tests {
				if !tests[name] {
					t.Errorf("%s has no test %s", r.pkg, name)
				}
			}
			fset := token.NewFileSet()
			rowFiles, files := parseFiles(t, fset, p.Dir, p.GoFiles), []*ast.File(nil)
			if q, _, ok := strings.Cut(r.ident, "."); ok {
				if len(byName[q]) != 1 {
					t.Fatalf("%s: want one package named %s, have %v", r.ident, q, byName[q])
				}
				p = all[module+"/"+byName[q][0]]
				files = parseFiles(t, fset, p.Dir, p.GoFiles)
			} else {
				files = rowFiles
			}
			if missing := missingLabels(append(rowFiles, files...), r.labels); len(missing) > 0 {
				t.Errorf("no string literal of %s or of %s's package is %q", r.pkg, r.ident, missing)
			}
			if r.ident == "" {
				return
			}
			if err := checkVersion(r, fset, files, imp); err != nil {
				t.Errorf("%s: %v", p.ImportPath, err)
			}
		})
	}
}

// TestCheckVersionFindsStale: checkVersion fails on a constant, or a
// computed variable, whose value differs from the row's, and on an
// identifier that does not exist; missingLabels finds a label no
// literal is.
func TestCheckVersionFindsStale(t *testing.T) {
	const src = `package p
const Version = 4
const info = "fedecdf x v2"
var migrations = []string{"a", "b", "c"}
var SchemaVersion = len(migrations)`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{f}
	for _, c := range []struct {
		ident, value string
		ok           bool
	}{
		{"p.Version", "4", true},
		{"p.Version", "0x4", true},
		{"p.Version", "3", false},
		{"p.Version", "", true},
		{"info", `"fedecdf x v2"`, true},
		{"info", `"fedecdf x v1"`, false},
		{"info", "2", false},
		{"p.SchemaVersion", "3", true},
		{"p.SchemaVersion", "4", false},
		{"p.Missing", "", false},
		{"migrations", "3", false},
	} {
		t.Run(c.ident+"="+c.value, func(t *testing.T) {
			err := checkVersion(versionRow{ident: c.ident, value: c.value}, fset, files, importer.Default())
			if (err == nil) != c.ok {
				t.Errorf("checkVersion: %v, want ok %v", err, c.ok)
			}
		})
	}
	if got := missingLabels(files, []string{"fedecdf x v2", "fedecdf x v1"}); !slices.Equal(got, []string{"fedecdf x v1"}) {
		t.Errorf("missingLabels: %q, want the label no literal is", got)
	}
}
