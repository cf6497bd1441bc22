package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// A file-backed ledger charges each release once and refuses a release
// that would exceed the dataset's total; a reopened ledger remembers.
func ExampleOpenFile() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ledger.json")
	total := ledger.Budget{Epsilon: 1}

	l, _ := ledger.OpenFile(path)
	first, _ := payload.NewID()
	fmt.Println(l.Charge("heart", first, ledger.Budget{Epsilon: 0.75}, total))

	reopened, _ := ledger.OpenFile(path)
	second, _ := payload.NewID()
	fmt.Println(reopened.Charge("heart", second, ledger.Budget{Epsilon: 0.5}, total))
	// Output:
	// <nil>
	// ledger: dataset "heart": budget exhausted: spent ε=0.75, δ=0 of the total ε=1, δ=0; this release needs ε=0.5, δ=0
}
