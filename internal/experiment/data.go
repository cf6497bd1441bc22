package experiment

import (
	"errors"
	"fmt"
	"github.com/fedecdf/fedecdf/aggregation/curator"
	"github.com/fedecdf/fedecdf/internal/ledger"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/dataset"
	"github.com/fedecdf/fedecdf/party"
)

// realData describes one of the paper's real data sets (dp-ecdf §6.2.2,
// Table 1) and how its label is read.
type realData struct {
	name, file, label, positive string
	drop                        []string
}

var (
	bank     = realData{name: "Bank", file: "bank-full.csv", label: "y", positive: "yes"}
	diabetes = realData{name: "Diabetes", file: "diabetic_data.csv", label: "readmitted", positive: "!NO", drop: []string{"encounter_id", "patient_nbr"}}
)

// errNoData marks an experiment skipped because its data set is absent.
var errNoData = errors.New("data set not found")

// scoredParties reads d from cfg.DataDir, trains the logistic regression
// on a seeded split (dataset.ScoreTable, as `fedecdf simulate`), and
// returns one party per test row holding its predicted probability as
// score and Hosmer–Lemeshow payload, on a grid of cfg.DataBins bins over
// [0, 1], and the model's test AUC.
func scoredParties(cfg Config, d realData) ([]*party.Party, float64, error) {
	path := filepath.Join(cfg.DataDir, d.file)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: %s (the paper's %s data; see --data-dir)", errNoData, path, d.name)
	}
	t, err := dataset.ReadTable(path, 0)
	if err != nil {
		return nil, 0, err
	}
	s, err := dataset.ScoreTable(t, d.label, d.positive, dataset.SplitOptions{Seed: cfg.Seed, Drop: d.drop})
	if err != nil {
		return nil, 0, err
	}
	g, err := ecdf.NewLinearGrid(0, 1, cfg.DataBins)
	if err != nil {
		return nil, 0, err
	}
	parties := make([]*party.Party, len(s.Scores))
	for k, p := range s.Scores {
		if parties[k], err = party.New(party.Instance{Score: p, Label: s.Labels[k], Probability: p, HasProbability: true}, g); err != nil {
			return nil, 0, fmt.Errorf("%s test row %d: %w", d.name, k+1, err)
		}
	}
	return parties, s.AUC, nil
}

// newCurator is the trusted-curator aggregation of parties (the plain
// backend) with a budget large enough for every run of an experiment:
// each run spends its ε on a fresh release, as the paper's runs do.
func newCurator(parties []*party.Party, bins int) (*curator.Curator, error) {
	return curator.New("experiment", bins, parties, ledger.Budget{Epsilon: math.MaxFloat64}, ledger.NewMemory())
}
