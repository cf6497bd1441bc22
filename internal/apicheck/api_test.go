package apicheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api/fedecdf.txt")

const module = "github.com/fedecdf/fedecdf"

// listed is a package as go list -export -deps -json describes it.
type listed struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Name         string
	Export       string
	Imports      []string
	Standard     bool
	DepOnly      bool
}

var (
	listOnce sync.Once
	listAll  map[string]*listed
	listErr  error
)

// packages lists the module's packages and their dependencies, with
// their export data (go list -export builds them).
func packages(t *testing.T) map[string]*listed {
	t.Helper()
	listOnce.Do(func() {
		cmd := exec.Command("go", "list", "-export", "-deps", "-json", "./...")
		cmd.Dir = filepath.Join("..", "..")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			listErr = fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
			return
		}
		listAll = map[string]*listed{}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			p := new(listed)
			if err := dec.Decode(p); err == io.EOF {
				break
			} else if err != nil {
				listErr = err
				return
			}
			listAll[p.ImportPath] = p
			// go test caches a test's result keyed by the files it
			// opens, not by those go list reads: open the module's
			// sources here, so that a change to them reruns the test.
			if strings.HasPrefix(p.ImportPath, module) {
				for _, name := range append(slices.Clone(p.GoFiles), p.XTestGoFiles...) {
					if _, err := os.ReadFile(filepath.Join(p.Dir, name)); err != nil {
						listErr = err
						return
					}
				}
			}
		}
	})
	if listErr != nil {
		t.Fatal(listErr)
	}
	return listAll
}

// public reports whether path is a public package of the module.
func public(p *listed) bool {
	rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
	return ok && !p.DepOnly && p.Name != "main" && !isInternal(p.ImportPath) && !strings.HasPrefix(rel, "cmd/")
}

func isInternal(path string) bool {
	return strings.HasPrefix(path, module) && (strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal"))
}

// exportImporter imports the packages of all from their export data.
func exportImporter(all map[string]*listed) types.Importer {
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		p, ok := all[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
}

// publicPackages type-checks (from export data) the public packages,
// sorted by path.
func publicPackages(t *testing.T) []*types.Package {
	all := packages(t)
	imp := exportImporter(all)
	var pkgs []*types.Package
	for _, p := range all {
		if !public(p) {
			continue
		}
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, pkg)
	}
	slices.SortFunc(pkgs, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return pkgs
}

// feature is one line of the API dump: an exported identifier and its
// declaration, and the types it mentions.
type feature struct {
	key      string // the identifier: "pkg P, func F", "pkg P, type T struct, F", …
	line     string // key and declaration
	mentions []types.Type
}

// features returns the API of pkg, sorted: each exported package-level
// object, and each exported field and method of its exported types.
func features(pkg *types.Package) []feature {
	qual := func(p *types.Package) string { return p.Path() }
	prefix := "pkg " + pkg.Path() + ", "
	var fs []feature
	add := func(key, decl string, ts ...types.Type) {
		fs = append(fs, feature{prefix + key, prefix + key + decl, ts})
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add("const "+name, " "+types.TypeString(o.Type(), qual), o.Type())
		case *types.Var:
			add("var "+name, " "+types.TypeString(o.Type(), qual), o.Type())
		case *types.Func:
			add("func "+name, strings.TrimPrefix(types.TypeString(o.Type(), qual), "func"), o.Type())
		case *types.TypeName:
			fs = append(fs, typeFeatures(prefix, o, qual)...)
		}
	}
	slices.SortFunc(fs, func(a, b feature) int { return strings.Compare(a.line, b.line) })
	return fs
}

func typeFeatures(prefix string, o *types.TypeName, qual types.Qualifier) []feature {
	name := o.Name()
	var fs []feature
	add := func(key, decl string, ts ...types.Type) {
		fs = append(fs, feature{prefix + key, prefix + key + decl, ts})
	}
	tparams := ""
	if n, ok := o.Type().(*types.Named); ok && n.TypeParams().Len() > 0 {
		var ps []string
		for i := range n.TypeParams().Len() {
			tp := n.TypeParams().At(i)
			ps = append(ps, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), qual))
		}
		tparams = "[" + strings.Join(ps, ", ") + "]"
	}
	under := o.Type().Underlying()
	switch {
	case o.IsAlias():
		add("type "+name, " = "+types.TypeString(types.Unalias(o.Type()), qual), o.Type())
		return fs
	case isStruct(under):
		add("type "+name, tparams+" struct")
		st := under.(*types.Struct)
		for i := range st.NumFields() {
			if f := st.Field(i); f.Exported() {
				add("type "+name+" struct, "+f.Name(), " "+types.TypeString(f.Type(), qual), f.Type())
			}
		}
	case isInterface(under):
		add("type "+name, tparams+" interface")
		it := under.(*types.Interface)
		for i := range it.NumMethods() {
			if m := it.Method(i); m.Exported() {
				add("type "+name+" interface, "+m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qual), "func"), m.Type())
			}
		}
		for i := range it.NumEmbeddeds() {
			add("type "+name+" interface, embeds "+types.TypeString(it.EmbeddedType(i), qual), "", it.EmbeddedType(i))
		}
	default:
		add("type "+name, tparams+" "+types.TypeString(under, qual), under)
	}
	if n, ok := o.Type().(*types.Named); ok {
		for i := range n.NumMethods() {
			m := n.Method(i)
			if !m.Exported() {
				continue
			}
			sig := m.Type().(*types.Signature)
			recv := name
			if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
				recv = "*" + name
			}
			add(fmt.Sprintf("method (%s) %s", recv, m.Name()), strings.TrimPrefix(types.TypeString(sig, qual), "func"), sig)
		}
	}
	return fs
}

func isStruct(t types.Type) bool    { _, ok := t.(*types.Struct); return ok }
func isInterface(t types.Type) bool { _, ok := t.(*types.Interface); return ok }

// internalMentions returns the internal/ types t mentions, by path.
func internalMentions(t types.Type) []string {
	seen := map[types.Type]bool{}
	var found []string
	var walk func(types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Alias:
			if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
				found = append(found, obj.Pkg().Path()+"."+obj.Name())
			}
			walk(types.Unalias(t))
		case *types.Named:
			obj := t.Obj()
			if obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
				found = append(found, obj.Pkg().Path()+"."+obj.Name())
				return
			}
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Chan:
			walk(t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := range tup.Len() {
					walk(tup.At(i).Type())
				}
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() || f.Embedded() {
					walk(f.Type())
				}
			}
		case *types.Interface:
			for i := range t.NumMethods() {
				walk(t.Method(i).Type())
			}
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := range t.Len() {
				walk(t.Term(i).Type())
			}
		}
	}
	walk(t)
	slices.Sort(found)
	return slices.Compact(found)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

func writeLines(t *testing.T, path, header string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

var apiFile = filepath.Join("..", "..", "api", "fedecdf.txt")

// TestAPI: the exported API of the public packages is api/fedecdf.txt.
func TestAPI(t *testing.T) {
	var got []string
	top := 0
	for _, pkg := range publicPackages(t) {
		for _, f := range features(pkg) {
			got = append(got, f.line)
		}
		for _, name := range pkg.Scope().Names() {
			if pkg.Scope().Lookup(name).Exported() {
				top++
			}
		}
	}
	header := fmt.Sprintf("# The exported API of fedecdf's public packages (outside internal/ and cmd/),\n# one identifier a line; regenerate with go test ./internal/apicheck -update.\n# %d exported package-level identifiers, %d lines.\n", top, len(got))
	if *update {
		writeLines(t, apiFile, header, got)
		return
	}
	want := readLines(t, apiFile)
	added, removed := diff(got, want)
	for _, l := range added {
		t.Errorf("new in the API, not in api/fedecdf.txt: %s", l)
	}
	for _, l := range removed {
		t.Errorf("in api/fedecdf.txt, gone from the API: %s", l)
	}
	if len(added)+len(removed) > 0 {
		t.Log("if the change is meant, run go test ./internal/apicheck -update and commit api/fedecdf.txt with it")
	}
	t.Logf("%d exported package-level identifiers in the public packages", top)
}

// TestNoInternalTypes: no exported identifier of a public package has a
// type that mentions an internal/ type, which another module cannot
// name (an alias of one counts: go/types resolves it).
func TestNoInternalTypes(t *testing.T) {
	for _, pkg := range publicPackages(t) {
		for _, f := range features(pkg) {
			var in []string
			for _, ty := range f.mentions {
				in = append(in, internalMentions(ty)...)
			}
			if len(in) > 0 {
				slices.Sort(in)
				t.Errorf("%s mentions %s, which another module cannot name", f.key, strings.Join(slices.Compact(in), ", "))
			}
		}
	}
}

// diff returns the lines of got not in want, and of want not in got.
func diff(got, want []string) (added, removed []string) {
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	g, w := in(got), in(want)
	for _, l := range got {
		if !w[l] {
			added = append(added, l)
		}
	}
	for _, l := range want {
		if !g[l] {
			removed = append(removed, l)
		}
	}
	return added, removed
}

// TestLayering: no package outside cmd/ imports runtime/debug (but
// internal/store, for debug.SetPanicOnFault alone: a per-goroutine
// setting that turns a fault in a damaged mapped file into an error),
// and the harnesses are imported only by cmd/, simulate and each other.
func TestLayering(t *testing.T) {
	harness := map[string]bool{module + "/internal/bench": true, module + "/internal/experiment": true}
	debugAllowed := map[string]bool{module + "/internal/store": true}
	for _, p := range packages(t) {
		if !strings.HasPrefix(p.ImportPath, module) || strings.HasPrefix(p.ImportPath, module+"/cmd/") {
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case imp == "runtime/debug" && !debugAllowed[p.ImportPath]:
				t.Errorf("%s imports runtime/debug: process policy belongs to cmd/", p.ImportPath)
			case harness[imp] && !harness[p.ImportPath] && p.ImportPath != module+"/simulate":
				t.Errorf("%s imports the harness %s", p.ImportPath, imp)
			}
		}
	}
}

// TestExamplesImportPublic: the examples of the public packages import
// no internal/ package, so that a reader can copy them into a module of
// their own.
func TestExamplesImportPublic(t *testing.T) {
	fset := token.NewFileSet()
	for _, p := range packages(t) {
		if !public(p) {
			continue
		}
		for _, name := range p.XTestGoFiles {
			if !strings.HasPrefix(name, "example") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path := strings.Trim(imp.Path.Value, `"`); isInternal(path) {
					t.Errorf("%s/%s imports %s", p.ImportPath, name, path)
				}
			}
		}
	}
}
