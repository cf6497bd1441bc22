package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Budget is an amount of privacy loss (ε, δ), mechanism.Budget: public,
// so that another module can set a dataset's budget.
type Budget = mechanism.Budget

// ErrBudgetExhausted is wrapped by the error of a charge that would exceed
// the dataset's total budget.
var ErrBudgetExhausted = errcode.New(errcode.BudgetExhausted, "budget exhausted")

// Ledger records, per dataset, the privacy budget spent by releases
// (core.Ledger, public so that another module can give a server one);
// it applies Admit.
type Ledger = core.Ledger

// Admit is the budget rule, the one every Ledger and the servers' check
// before a release apply (basic composition): a release already charged
// (charged: a retry after a crash or a lost reply) is admitted at no
// further cost, whatever remains of the budget; a new release when
// spent + cost stays within total in both ε and δ, up to a relative
// rounding slack (ten releases at ε = 0.1 spend exactly ε = 1). A
// refusal wraps ErrBudgetExhausted; a cost that is not a valid budget
// is refused with another error.
func Admit(charged bool, spent, cost, total Budget) error {
	if err := admit(charged, spent, cost, total); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// admit is Admit without the package prefix.
func admit(charged bool, spent, cost, total Budget) error {
	if err := cost.Valid(); err != nil {
		return fmt.Errorf("cost: %w", err)
	}
	if charged {
		return nil
	}
	after := spent.Add(cost)
	if after.Epsilon > total.Epsilon*(1+ledgerSlack) || after.Delta > total.Delta*(1+ledgerSlack) {
		return fmt.Errorf("%w: spent ε=%g, δ=%g of the total ε=%g, δ=%g; this release needs ε=%g, δ=%g",
			ErrBudgetExhausted, spent.Epsilon, spent.Delta, total.Epsilon, total.Delta, cost.Epsilon, cost.Delta)
	}
	return nil
}

// ledgerSlack absorbs floating-point rounding when releases add up
// exactly to the total (ten releases at ε = 0.1 spend ε = 1).
const ledgerSlack = 1e-9

type ledgerEntry struct {
	Spent    Budget   `json:"spent"`
	Releases []string `json:"releases"` // hexadecimal release IDs, in charge order
}

type ledgerState map[string]*ledgerEntry

// charge returns the state after the charge, leaving s untouched, and
// whether anything changed.
func (s ledgerState) charge(dataset string, release payload.ReleaseID, cost, total Budget) (ledgerState, bool, error) {
	e := s[dataset]
	if e == nil {
		e = &ledgerEntry{}
	}
	charged := slices.Contains(e.Releases, release.String())
	if err := admit(charged, e.Spent, cost, total); err != nil {
		return nil, false, fmt.Errorf("dataset %q: %w", dataset, err)
	}
	if charged {
		return s, false, nil
	}
	next := make(ledgerState, len(s)+1)
	for k, v := range s {
		next[k] = v
	}
	next[dataset] = &ledgerEntry{Spent: e.Spent.Add(cost), Releases: append(slices.Clip(e.Releases), release.String())}
	return next, true, nil
}

// Memory is a Ledger held in memory only (tests, simulations).
type Memory struct {
	mu    sync.Mutex
	state ledgerState
}

// NewMemory returns an empty in-memory ledger.
func NewMemory() *Memory { return &Memory{state: ledgerState{}} }

// Charge implements Ledger.
func (l *Memory) Charge(dataset string, release payload.ReleaseID, cost, total Budget) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	next, _, err := l.state.charge(dataset, release, cost, total)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	l.state = next
	return nil
}

// Charged implements Ledger.
func (l *Memory) Charged(dataset string, release payload.ReleaseID) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.state[dataset]
	return e != nil && slices.Contains(e.Releases, release.String()), nil
}

// Releases implements Ledger.
func (l *Memory) Releases(dataset string) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.state[dataset]; e != nil {
		return uint64(len(e.Releases)), nil
	}
	return 0, nil
}

// Spent implements Ledger.
func (l *Memory) Spent(dataset string) (Budget, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.state[dataset]; e != nil {
		return e.Spent, nil
	}
	return Budget{}, nil
}

// File is a Ledger kept in a JSON file. Every charge writes the
// whole ledger to a temporary file in the same directory, syncs it and
// renames it over the old one, so the file always holds either the old or
// the new ledger, and a charge is durable when Charge returns.
type File struct {
	path string
	mem  Memory
}

// OpenFile loads the ledger at path, or starts an empty one if the
// file does not exist.
func OpenFile(path string) (*File, error) {
	l := &File{path: path, mem: Memory{state: ledgerState{}}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := json.Unmarshal(b, &l.mem.state); err != nil {
		return nil, fmt.Errorf("ledger: %s: %w", path, err)
	}
	for name, e := range l.mem.state {
		if e == nil {
			return nil, fmt.Errorf("ledger: %s: dataset %q has no entry", path, name)
		}
		if err := e.Spent.Valid(); err != nil {
			return nil, fmt.Errorf("ledger: %s: dataset %q spent %w", path, name, err)
		}
	}
	return l, nil
}

// Charge implements Ledger.
func (l *File) Charge(dataset string, release payload.ReleaseID, cost, total Budget) error {
	l.mem.mu.Lock()
	defer l.mem.mu.Unlock()
	next, changed, err := l.mem.state.charge(dataset, release, cost, total)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if !changed {
		return nil
	}
	if err := writeAtomically(l.path, next); err != nil {
		return fmt.Errorf("ledger: recording the charge of release %v: %w", release, err)
	}
	l.mem.state = next
	return nil
}

// Spent implements Ledger.
func (l *File) Spent(dataset string) (Budget, error) { return l.mem.Spent(dataset) }

// Charged implements Ledger.
func (l *File) Charged(dataset string, release payload.ReleaseID) (bool, error) {
	return l.mem.Charged(dataset, release)
}

// Releases implements Ledger.
func (l *File) Releases(dataset string) (uint64, error) { return l.mem.Releases(dataset) }

func writeAtomically(path string, state ledgerState) error {
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
