package ledger

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/fedecdf/fedecdf/internal/payload"
)

// admitCases are the budget rule's cases: want is nil, ErrBudgetExhausted
// or errInvalid (a cost that is no budget).
var admitCases = []struct {
	name               string
	charged            bool
	spent, cost, total Budget
	want               error
}{
	{"new, within ε", false, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 0.4, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"new, exactly the rest of ε", false, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"new, the rest of ε up to rounding", false, Budget{Epsilon: 0.1, Delta: 0}, Budget{Epsilon: 0.2, Delta: 0}, Budget{Epsilon: 0.3, Delta: 0}, nil}, // 0.1 + 0.2 > 0.3 in float64
	{"new, over ε by more than rounding", false, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 0.5 + 1e-6, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, ErrBudgetExhausted},
	{"new, over ε", false, Budget{Epsilon: 0.6, Delta: 0}, Budget{Epsilon: 0.6, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, ErrBudgetExhausted},
	{"new, zero cost on a spent budget", false, Budget{Epsilon: 1, Delta: 1e-6}, Budget{Epsilon: 0, Delta: 0}, Budget{Epsilon: 1, Delta: 1e-6}, nil},
	{"new, within δ", false, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 3e-6}, nil},
	{"new, exactly the rest of δ", false, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 2e-6}, nil},
	{"new, over δ", false, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 0.1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, ErrBudgetExhausted},
	{"new, over δ and ε", false, Budget{Epsilon: 1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, ErrBudgetExhausted},
	{"new, pure cost on a pure budget", false, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"new, δ > 0 on a pure budget", false, Budget{Epsilon: 0, Delta: 0}, Budget{Epsilon: 0.1, Delta: 1e-12}, Budget{Epsilon: 1, Delta: 0}, ErrBudgetExhausted},
	{"charged, within", true, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 0.5, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"charged, over ε", true, Budget{Epsilon: 1, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"charged, over δ", true, Budget{Epsilon: 0.5, Delta: 1e-6}, Budget{Epsilon: 0.5, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, nil},
	{"charged, over ε and δ", true, Budget{Epsilon: 1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, Budget{Epsilon: 1, Delta: 1e-6}, nil},
	{"charged, δ > 0 on a pure budget", true, Budget{Epsilon: 0, Delta: 0}, Budget{Epsilon: 0.1, Delta: 1e-12}, Budget{Epsilon: 1, Delta: 0}, nil},
	{"NaN ε", false, Budget{}, Budget{Epsilon: math.NaN(), Delta: 0}, Budget{Epsilon: 1, Delta: 0}, errInvalid},
	{"negative ε", false, Budget{}, Budget{Epsilon: -0.1, Delta: 0}, Budget{Epsilon: 1, Delta: 0}, errInvalid},
	{"δ of 1", true, Budget{}, Budget{Epsilon: 0.1, Delta: 1}, Budget{Epsilon: 1, Delta: 0.5}, errInvalid},
}

var errInvalid = errors.New("invalid cost")

// TestAdmit is the budget rule over every case, applied by Admit and by
// every Ledger of the package: the same answer, and a charge recorded
// exactly when it is new and admitted.
func TestAdmit(t *testing.T) {
	for _, c := range admitCases {
		t.Run(c.name, func(t *testing.T) {
			check := func(who string, err error) {
				t.Helper()
				switch {
				case c.want == nil && err != nil, c.want == ErrBudgetExhausted && !errors.Is(err, ErrBudgetExhausted):
					t.Errorf("%s: %v, want %v", who, err, c.want)
				case c.want == errInvalid && (err == nil || errors.Is(err, ErrBudgetExhausted)):
					t.Errorf("%s: %v, want an invalid cost refused", who, err)
				}
			}
			check("Admit", Admit(c.charged, c.spent, c.cost, c.total))
			file, err := OpenFile(filepath.Join(t.TempDir(), "ledger.json"))
			if err != nil {
				t.Fatal(err)
			}
			for name, l := range map[string]Ledger{"Memory": NewMemory(), "File": file} {
				rel := ledgerAt(t, l, c.charged, c.spent)
				check(name, l.Charge("d", rel, c.cost, c.total))
				spent, _ := l.Spent("d")
				want := c.spent
				if c.want == nil && !c.charged {
					want = c.spent.Add(c.cost)
				}
				if spent != want {
					t.Errorf("%s spent %+v after the charge, want %+v", name, spent, want)
				}
			}
		})
	}
}

// ledgerAt brings l to spending spent on dataset "d" and returns the ID
// of a release to charge next: one already on the ledger if charged.
func ledgerAt(t *testing.T, l Ledger, charged bool, spent Budget) payload.ReleaseID {
	t.Helper()
	first, _ := payload.NewID()
	if err := l.Charge("d", first, spent, Budget{Epsilon: 10, Delta: 0.5}); err != nil {
		t.Fatal(err)
	}
	if charged {
		return first
	}
	next, _ := payload.NewID()
	return next
}
