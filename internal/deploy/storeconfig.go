package deploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"github.com/fedecdf/fedecdf/internal/store"
)

// storeConfig is the part of a manifest that gives a server's stored
// data its meaning: the reports are DCF keys or histograms (backend) on
// one grid with one payload layout, the ledger and the releases belong
// to the dataset and were charged under the neighbouring relation. A
// store records it when first opened (the store's configuration record)
// and a server compares it with its manifest before it reads any stored
// report (checkStoreConfig).
type storeConfig struct {
	Dataset    string        `json:"dataset"`
	Backend    string        `json:"backend"`
	Grid       manifest.Grid `json:"grid"`
	Neighbours string        `json:"neighbours"`
	Payload    []string      `json:"payload"`
}

// storeConfigOf returns the storeConfig of m.
func storeConfigOf(m *manifest.Manifest) storeConfig {
	return storeConfig{Dataset: m.Dataset, Backend: m.Backend, Grid: m.Grid, Neighbours: m.Mechanism.Neighbours, Payload: m.Payload}
}

// configChange is one field of a storeConfig that differs: its manifest
// name and its value in the store and in the manifest.
type configChange struct {
	field, old, new string
}

// diff returns the fields in which c (the manifest's) differs from old
// (the store's).
func (c storeConfig) diff(old storeConfig) []configChange {
	var ch []configChange
	add := func(field, o, n string) {
		if o != n {
			ch = append(ch, configChange{field, o, n})
		}
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	add("dataset", old.Dataset, c.Dataset)
	add("backend", old.Backend, c.Backend)
	add("grid.bins", strconv.Itoa(old.Grid.Bins), strconv.Itoa(c.Grid.Bins))
	add("grid.min", g(old.Grid.Min), g(c.Grid.Min))
	add("grid.max", g(old.Grid.Max), g(c.Grid.Max))
	add("grid.scale", old.Grid.Scale, c.Grid.Scale)
	add("mechanism.neighbours", old.Neighbours, c.Neighbours)
	if !slices.Equal(old.Payload, c.Payload) {
		add("payload", strings.Join(old.Payload, ","), strings.Join(c.Payload, ","))
	}
	return ch
}

// describeChanges lists the changes as "field: old in the store, new in the
// manifest".
func describeChanges(ch []configChange) string {
	parts := make([]string, len(ch))
	for i, c := range ch {
		parts[i] = fmt.Sprintf("%s: %q in the store, %q in the manifest", c.field, c.old, c.new)
	}
	return strings.Join(parts, "; ")
}

// checkStoreConfig compares the manifest with the configuration the
// store was created under, before anything stored is read: a store
// without a record (new) records the manifest's; an equal one passes.
// A change over a store that holds nothing of its dataset (no report,
// release or charge) is recorded and logged. Over stored data:
//   - the neighbouring relation may change only while nothing was
//     released (logged at WARN); after a release it is refused outright
//     (a release under replace published the exact n, which no add/remove
//     guarantee can take back; one under addremove was charged in a unit
//     replace does not compose with);
//   - any other change (dataset, backend, grid, payload) is refused: the
//     stored reports would be re-read on another grid or as another kind,
//     and the ledger left behind.
//
// Refusals wrap ErrStoreConfig and name each field, its old and new
// value, and what to do; nothing in the store is changed.
func (s *Server) checkStoreConfig() error {
	want := storeConfigOf(s.cfg.Manifest)
	rec, found, err := s.store.Config()
	if err != nil {
		return err
	}
	b, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("deploy: encoding the store's configuration record: %w", err)
	}
	if !found {
		if n, err := s.store.NumReports(want.Dataset); err == nil && n > 0 {
			s.log.Warn("the store has reports but no configuration record (written by an earlier fedecdf): recording this manifest's, which must be the one the store was started with", "store", store.Name(s.cfg.Store), "reports", n)
		}
		return s.store.SetConfig(b)
	}
	var old storeConfig
	if err := json.Unmarshal(rec, &old); err != nil {
		return fmt.Errorf("deploy: store %s: its configuration record %q does not decode (%v): the store is damaged", store.Name(s.cfg.Store), rec, err)
	}
	ch := want.diff(old)
	if len(ch) == 0 {
		return nil
	}
	reports, err := s.store.NumReports(old.Dataset)
	if err != nil {
		return err
	}
	spent, err := s.store.Spent(old.Dataset)
	if err != nil {
		return err
	}
	released, err := s.store.HasReleases(old.Dataset)
	if err != nil {
		return err
	}
	released = released || spent.Epsilon > 0 || spent.Delta > 0
	attrs := []any{"store", store.Name(s.cfg.Store), "changes", describeChanges(ch), "reports", reports, "released", released}
	switch {
	case reports == 0 && !released:
		s.log.Info("the store holds nothing yet: recording the manifest's configuration", attrs...)
	case released && slices.ContainsFunc(ch, func(c configChange) bool { return c.field == "mechanism.neighbours" }):
		return fmt.Errorf("%s: %w: %s: refused outright, since dataset %q has releases: those under %q were charged and published under that relation (under replace the exact number of reports), which a release under %q cannot take back; start the server on the manifest the store was created under, or on a new store file (the parties upload again)", s.name, ErrStoreConfig, describeChanges(ch), old.Dataset, old.Neighbours, want.Neighbours)
	case len(ch) == 1 && ch[0].field == "mechanism.neighbours":
		s.log.Warn("the neighbouring relation changed before any release", attrs...)
	default:
		return fmt.Errorf("%s: %w: %s; the store %s holds %d reports of dataset %q (released: %v), which mean something else under the new values: start the server on the manifest the store was created under, or on a new store file (the parties upload again); nothing in the store was changed", s.name, ErrStoreConfig, describeChanges(ch), store.Name(s.cfg.Store), reports, old.Dataset, released)
	}
	return s.store.SetConfig(b)
}

// checkBudget compares the manifest's total budget with the one the
// store's ledger is kept under, and records the manifest's: a new store
// or an equal budget passes, and so does another one over a ledger that
// has charged nothing yet (logged); over one that has, another budget is
// refused (ErrBudgetChanged) unless the operator accepts the change
// (ServerConfig.AcceptBudgetChange), which is logged at WARN with the
// old and the new budget and what is spent.
func (s *Server) checkBudget(want ledger.Budget) error {
	name := s.cfg.Manifest.Dataset
	old, found, err := s.store.Total(name)
	if err != nil || (found && old == want) {
		return err
	}
	spent, err := s.store.Spent(name)
	if err != nil {
		return err
	}
	attrs := []any{"dataset", name, "old_epsilon", old.Epsilon, "old_delta", old.Delta, "new_epsilon", want.Epsilon, "new_delta", want.Delta, "spent_epsilon", spent.Epsilon, "spent_delta", spent.Delta}
	switch {
	case found && spent != (ledger.Budget{}) && !s.cfg.AcceptBudgetChange:
		return fmt.Errorf("%s: dataset %q: %w: the manifest's total budget ε=%g, δ=%g is not the ε=%g, δ=%g the ledger in %s has spent ε=%g, δ=%g under", s.name, name, ErrBudgetChanged, want.Epsilon, want.Delta, old.Epsilon, old.Delta, store.Name(s.cfg.Store), spent.Epsilon, spent.Delta)
	case found && spent != (ledger.Budget{}):
		s.log.Warn("total budget changed by --accept-budget-change", attrs...)
	case found:
		s.log.Info("total budget changed before any release was charged", attrs...)
	}
	return s.store.SetTotal(name, want)
}
