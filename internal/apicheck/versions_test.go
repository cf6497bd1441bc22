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
	pkg      string         // the test cell's package, relative to the module
	tests    []string       // the test cell's test functions
	idents   []versionIdent // the version cell's identifiers, in order
	labels   []string       // the other quoted strings of the version cell
}

// versionIdent is an identifier a version cell names, and the value it
// says the identifier has.
type versionIdent struct {
	name  string // "pkg.Name", or "name" of the row's package
	value string // its value in parentheses, a Go literal; "" when none
}

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	quoted     = regexp.MustCompile(`"[^"]*"`)
	// identValue matches an identifier of a version cell and the
	// literal that opens its parenthesis: `protocol.Version` (11),
	// `verdictRecordVersion` (3; …), `vdcf.Version` ("fedecdf/vdcf v6"),
	// `ErrOldRowKey` for v1.
	identValue = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_.]*)`(?: \\((\"[^\"]*\"|0x[0-9a-fA-F]+|[0-9]+)[;,)])?")
)

// parseVersionCell returns the identifiers a version cell names, each
// with the value it gives it, and the cell's other quoted strings.
func parseVersionCell(cell string) ([]versionIdent, []string) {
	var idents []versionIdent
	values := map[string]bool{}
	for _, m := range identValue.FindAllStringSubmatch(cell, -1) {
		idents = append(idents, versionIdent{name: m[1], value: m[2]})
		values[m[2]] = true
	}
	var labels []string
	for _, q := range quoted.FindAllString(cell, -1) {
		if !values[q] {
			labels = append(labels, q[1:len(q)-1])
		}
	}
	return idents, labels
}

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
		r.idents, r.labels = parseVersionCell(strings.TrimSpace(cells[2]))
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
// (store.SchemaVersion = len(migrations)). Unless need, a declared
// identifier of no such value (a sentinel error) is nil and no error.
func value(fset *token.FileSet, files []*ast.File, imp types.Importer, name string, need bool) (constant.Value, error) {
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
		if !need {
			return nil, nil
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

// checkVersion checks that the identifier id names in files, parsed
// into fset (the identifier's package), exists and, when the cell gives
// it a value, has that value.
func checkVersion(id versionIdent, fset *token.FileSet, files []*ast.File, imp types.Importer) error {
	name := id.name[strings.LastIndex(id.name, ".")+1:]
	got, err := value(fset, files, imp, name, id.value != "")
	if err != nil || id.value == "" {
		return err
	}
	kind := token.INT
	if strings.HasPrefix(id.value, `"`) {
		kind = token.STRING
	}
	want := constant.MakeFromLiteral(id.value, kind, 0)
	if got.Kind() != want.Kind() || !constant.Compare(got, token.EQL, want) {
		return fmt.Errorf("ARCHITECTURE.md says %s is %s, the code says %s", id.name, id.value, got.ExactString())
	}
	return nil
}

// checkIdents checks every identifier of r (checkVersion) in the files
// of its package, which filesOf returns (parsed into fset, named by
// the identifier's qualifier, "" for the row's package), and that each
// of r's labels is a string literal of the row's package or of one of
// the identifiers'. It returns one error per identifier stale or
// missing, and one for the labels missing.
func checkIdents(r versionRow, fset *token.FileSet, filesOf func(qualifier string) ([]*ast.File, error), imp types.Importer) []error {
	var errs []error
	all, err := filesOf("")
	if err != nil {
		return []error{err}
	}
	for _, id := range r.idents {
		q, _, ok := strings.Cut(id.name, ".")
		if !ok {
			q = ""
		}
		files, err := filesOf(q)
		if err == nil {
			err = checkVersion(id, fset, files, imp)
			all = append(all, files...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id.name, err))
		}
	}
	if missing := missingLabels(all, r.labels); len(missing) > 0 {
		errs = append(errs, fmt.Errorf("no string literal of %s or of its identifiers' packages is %q", r.pkg, missing))
	}
	return errs
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
// versioned formats names tests that exist in its package, every
// identifier its version cell names (checkIdents: the version constant
// or variable, and any other) exists with the value the row gives it,
// and the other strings it quotes (info strings, labels) are string
// literals of its package or of one of those identifiers'.
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
			parsed := map[string][]*ast.File{} // by import path, parsed once into fset
			filesOf := func(q string) ([]*ast.File, error) {
				pkg := p
				if q != "" {
					if len(byName[q]) != 1 {
						return nil, fmt.Errorf("want one package named %s, have %v", q, byName[q])
					}
					pkg = all[module+"/"+byName[q][0]]
				}
				if _, ok := parsed[pkg.ImportPath]; !ok {
					parsed[pkg.ImportPath] = parseFiles(t, fset, pkg.Dir, pkg.GoFiles)
				}
				return parsed[pkg.ImportPath], nil
			}
			for _, err := range checkIdents(r, fset, filesOf, imp) {
				t.Errorf("%s: %v", r.pkg, err)
			}
		})
	}
}

// TestCheckVersionFindsStale: checkVersion fails on a constant, or a
// computed variable, whose value differs from the row's, and on an
// identifier that does not exist; a sentinel error named without a
// value need only exist; missingLabels finds a label no literal is.
func TestCheckVersionFindsStale(t *testing.T) {
	fset := token.NewFileSet()
	files := parseSources(t, fset, map[string]string{"p": stalePkg})["p"]
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
		{"ErrOld", "", true},
		{"ErrOld", "1", false},
	} {
		t.Run(c.ident+"="+c.value, func(t *testing.T) {
			err := checkVersion(versionIdent{name: c.ident, value: c.value}, fset, files, importer.Default())
			if (err == nil) != c.ok {
				t.Errorf("checkVersion: %v, want ok %v", err, c.ok)
			}
		})
	}
	if got := missingLabels(files, []string{"fedecdf x v2", "fedecdf x v1"}); !slices.Equal(got, []string{"fedecdf x v1"}) {
		t.Errorf("missingLabels: %q, want the label no literal is", got)
	}
}

// stalePkg and staleQ are the packages p and q of the stale-row tests.
const (
	stalePkg = `package p
import "errors"
const Version = 4
const info = "fedecdf x v2"
var migrations = []string{"a", "b", "c"}
var SchemaVersion = len(migrations)
var ErrOld = errors.New("old")`
	staleQ = `package q
const FrameVersion = 1
const frameInfo = "fedecdf q frame v1"`
)

// parseSources parses one file of source per package name into fset.
func parseSources(t *testing.T, fset *token.FileSet, srcs map[string]string) map[string][]*ast.File {
	t.Helper()
	files := map[string][]*ast.File{}
	for name, src := range srcs {
		f, err := parser.ParseFile(fset, name+".go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = []*ast.File{f}
	}
	return files
}

// TestCheckIdentsFindsEveryStaleIdentifier: a version cell is parsed
// into all the identifiers it names, each with its value, and checkIdents
// finds any of them stale or missing, the second as the first, and a
// label that is a literal of none of the row's and identifiers'
// packages (the row's package is p).
func TestCheckIdentsFindsEveryStaleIdentifier(t *testing.T) {
	fset := token.NewFileSet()
	pkgs := parseSources(t, fset, map[string]string{"p": stalePkg, "q": staleQ})
	filesOf := func(q string) ([]*ast.File, error) {
		if q == "" {
			q = "p"
		}
		if files, ok := pkgs[q]; ok {
			return files, nil
		}
		return nil, fmt.Errorf("no package %s", q)
	}
	for _, c := range []struct {
		name, cell string
		idents     int
		stale      []string // the identifiers, or "labels", each error names
	}{
		{"one", "`p.Version` (4)", 1, nil},
		{"both current", "`p.Version` (4), `q.FrameVersion` (1), info strings (\"fedecdf q frame v1\")", 2, nil},
		{"first stale", "`p.Version` (5), `q.FrameVersion` (1)", 2, []string{"p.Version"}},
		{"second stale", "`p.Version` (4), `q.FrameVersion` (2)", 2, []string{"q.FrameVersion"}},
		{"second stale string", "`info` (\"fedecdf x v2\"), `p.SchemaVersion` (4; 3 still read)", 2, []string{"p.SchemaVersion"}},
		{"second missing", "`SchemaVersion` (3), `p.Gone` for v1", 2, []string{"p.Gone"}},
		{"second of no package", "`Version` (4), `r.Version` (4)", 2, []string{"r.Version"}},
		{"sentinel named second", "labels \"fedecdf x v2\" (`ErrOld` for v1)", 1, nil},
		{"label of the second's package", "`Version` (4), `q.FrameVersion` (1), \"fedecdf q frame v1\"", 2, nil},
		{"label of no named package", "`Version` (4), \"fedecdf q frame v1\"", 1, []string{"labels"}},
		{"both stale", "`p.Version` (3), `q.FrameVersion` (0x2)", 2, []string{"p.Version", "q.FrameVersion"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := versionRow{pkg: "p"}
			r.idents, r.labels = parseVersionCell(c.cell)
			if len(r.idents) != c.idents {
				t.Fatalf("parsed %d identifiers %v, want %d", len(r.idents), r.idents, c.idents)
			}
			errs := checkIdents(r, fset, filesOf, importer.Default())
			if len(errs) != len(c.stale) {
				t.Fatalf("checkIdents: %v, want one error for each of %q", errs, c.stale)
			}
			for k, err := range errs {
				if want := c.stale[k]; want != "labels" && !strings.HasPrefix(err.Error(), want+": ") ||
					want == "labels" && !strings.Contains(err.Error(), "no string literal") {
					t.Errorf("error %d %q, want it about %s", k, err, want)
				}
			}
		})
	}
}
