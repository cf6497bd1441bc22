package apicheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// layers reads the layer list of ARCHITECTURE.md (the first code block
// after "## Layers"), top first: each line's packages, relative to the
// module. A name after a comma without a slash is in the first name's
// directory ("internal/protocol, wire"); names separated by two spaces
// each end with a slash ("roc/  hosmer/").
func layers(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "## Layers")
	if i < 0 {
		t.Fatal("ARCHITECTURE.md has no \"## Layers\" section")
	}
	parts := strings.SplitN(text[i:], "```", 3)
	if len(parts) < 3 {
		t.Fatal("the Layers section has no code block")
	}
	name := regexp.MustCompile(`^[a-z0-9/]+,?$`)
	var list [][]string
	for _, line := range strings.Split(parts[1], "\n") {
		if line == "" || strings.HasPrefix(line, " ") {
			continue // a description's continuation
		}
		var pkgs []string
		var prev string
		for k, tok := range strings.Fields(line) {
			after := strings.HasSuffix(prev, ",")
			if !name.MatchString(tok) || k > 0 && !after && !(strings.HasSuffix(prev, "/") && strings.HasSuffix(tok, "/")) {
				break
			}
			p := strings.TrimSuffix(strings.TrimSuffix(tok, ","), "/")
			if after && !strings.Contains(p, "/") && len(pkgs) > 0 {
				p = path.Join(path.Dir(pkgs[0]), p)
			}
			pkgs = append(pkgs, p)
			prev = tok
		}
		if len(pkgs) > 0 {
			list = append(list, pkgs)
		}
	}
	return list
}

// TestLayersMatchTree: ARCHITECTURE.md's layer list names every package
// of the module and no other, and every import points to the
// importer's line or one below it.
func TestLayersMatchTree(t *testing.T) {
	line := map[string]int{}
	for k, pkgs := range layers(t) {
		for _, p := range pkgs {
			line[p] = k
		}
	}
	all := packages(t)
	seen := map[string]bool{}
	for _, p := range all {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok || p.DepOnly {
			continue
		}
		seen[rel] = true
		k, listed := line[rel]
		if !listed {
			t.Errorf("%s is not in ARCHITECTURE.md's layer list", rel)
			continue
		}
		for _, imp := range p.Imports {
			q, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if kq, listed := line[q]; listed && kq < k {
				t.Errorf("%s imports %s, a layer above it in ARCHITECTURE.md", rel, q)
			}
		}
	}
	for p := range line {
		if !seen[p] {
			t.Errorf("ARCHITECTURE.md's layer list names %s, which is no package of the module", p)
		}
	}
}
