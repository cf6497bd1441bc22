package bench

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/ecdf/hierarchy"
	"github.com/fedecdf/fedecdf/ecdf/mechanism"
	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// TreesConfig describes the counting-on-trees comparison: for each tree
// shape, δ and α, every mechanism releases the node counts of the data
// (Data gives the histogram over the shape's bins) and its α-mRMSE is
// measured.
type TreesConfig struct {
	Shapes     [][2]int // (arity, depth) pairs; the grid has arity^(depth−1) bins
	Epsilon    float64
	Deltas     []float64
	Alphas     []float64
	Relation   mechanism.Relation
	Mechanisms []string // hierarchy.New names
	Runs       int
	Data       func(bins int) ([]int64, string, error) // histogram and its name
	Seed       uint64
}

// TreesRow is one mechanism at one (shape, δ, α).
type TreesRow struct {
	Arity     int     `json:"arity"`
	Depth     int     `json:"depth"`
	Bins      int     `json:"bins"`
	Data      string  `json:"data"`
	Epsilon   float64 `json:"epsilon"`
	Delta     float64 `json:"delta"` // the mechanism's (0 for the pure ones)
	Alpha     float64 `json:"alpha"`
	Mechanism string  `json:"mechanism"`
	// MRMSE is the largest over the nodes of the Monte-Carlo α-mRMSE over
	// Runs releases (for a prefix mechanism, each node's pooled with the
	// nodes whose noise has the same law, lawKey, and capped at its exact
	// RMSE); Predicted the worst case over data sets that the
	// public parameters give (NodeMechanism.PredictedMRMSE).
	MRMSE     float64 `json:"mc_node_mrmse"`
	Predicted float64 `json:"predicted_node_mrmse"`
	// BestBaseline is the least MRMSE of the other mechanisms at the
	// same (shape, δ, α), Ratio this row's MRMSE over it.
	BestBaseline float64 `json:"best_baseline_mrmse"`
	Ratio        float64 `json:"ratio_to_best_baseline"`
	Runs         int     `json:"runs"`
}

// Trees runs cfg, writing a progress line per row to progress (nil for
// none).
func Trees(cfg TreesConfig, progress io.Writer) ([]TreesRow, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("bench: runs %d: need at least 1 release", cfg.Runs)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x74726565))
	var rows []TreesRow
	for _, shape := range cfg.Shapes {
		arity, depth := shape[0], shape[1]
		bins := int(math.Round(math.Pow(float64(arity), float64(depth-1))))
		t, err := hierarchy.NewTree(bins, arity)
		if err != nil {
			return nil, err
		}
		hist, data, err := cfg.Data(bins)
		if err != nil {
			return nil, err
		}
		for _, delta := range cfg.Deltas {
			for _, alpha := range cfg.Alphas {
				start := len(rows)
				for _, name := range cfg.Mechanisms {
					m, err := hierarchy.New(name, hierarchy.Params{Bins: bins, Arity: arity, Epsilon: cfg.Epsilon, Delta: delta, Alpha: alpha, Relation: cfg.Relation})
					if err != nil {
						return nil, err
					}
					worst, err := nodeMRMSE(m, hist, alpha, cfg.Runs, rng)
					if err != nil {
						return nil, err
					}
					row := TreesRow{Arity: arity, Depth: t.Depth(), Bins: bins, Data: data, Epsilon: cfg.Epsilon, Delta: m.Delta(),
						Alpha: alpha, Mechanism: m.Name(), MRMSE: worst, Predicted: m.PredictedMRMSE(alpha), Runs: cfg.Runs}
					rows = append(rows, row)
					if progress != nil {
						fmt.Fprintf(progress, "b=%d d=%d δ=%g α=%g %-28s α-mRMSE %.4g (predicted %.4g)\n", arity, t.Depth(), delta, alpha, row.Mechanism, worst, row.Predicted)
					}
				}
				for i := start; i < len(rows); i++ {
					best := math.Inf(1)
					for k := start; k < len(rows); k++ {
						if k != i {
							best = min(best, rows[k].MRMSE)
						}
					}
					rows[i].BestBaseline, rows[i].Ratio = best, rows[i].MRMSE/best
				}
			}
		}
	}
	return rows, nil
}

// nodeMRMSE returns the largest over the nodes of the Monte-Carlo
// α-mRMSE of runs releases of m on hist: per node for counting-on-trees,
// whose error depends on the data, and pooled over the nodes of equal
// noise law (pooledLaws) for a prefix mechanism.
func nodeMRMSE(m hierarchy.NodeMechanism, hist []int64, alpha float64, runs int, rng *rand.Rand) (float64, error) {
	truth, err := m.Tree().Counts(hist)
	if err != nil {
		return 0, err
	}
	worst := 0.0
	if pm, ok := m.(interface{ Mechanism() mechanism.Mechanism }); ok {
		t := m.Tree()
		var spans []span
		for l := range t.Depth() {
			for j := range t.LevelNodes(l) {
				lo, hi := t.Range(l, j)
				spans = append(spans, span{lo, hi, float64(truth[l][j])})
			}
		}
		exact := termsExact(pm.Mechanism(), spans)
		keys := make([]string, len(spans))
		for k, s := range spans {
			keys[k] = lawKey(pm.Mechanism(), s, exact)
		}
		laws := pooledLaws(pm.Mechanism(), spans, keys, runs, rng)
		for k, s := range spans {
			worst = max(worst, capped(laws[keys[k]].mse(alpha*s.truth), exact, hierarchy.RangeVariance(pm.Mechanism(), s.lo, s.hi)))
		}
		return math.Sqrt(worst), nil
	}
	sq := make([][]float64, len(truth))
	for l := range sq {
		sq[l] = make([]float64, len(truth[l]))
	}
	for range runs {
		var seed noise.Seed
		for j := 0; j < len(seed); j += 8 {
			binary.LittleEndian.PutUint64(seed[j:], rng.Uint64())
		}
		out, err := m.Release(hist, seed)
		if err != nil {
			return 0, err
		}
		for l := range out {
			for j, v := range out[l] {
				e := hierarchy.MultiplicativeError(alpha, float64(truth[l][j]), float64(v))
				sq[l][j] += e * e
			}
		}
	}
	for l := range sq {
		for _, s := range sq[l] {
			worst = max(worst, s)
		}
	}
	return math.Sqrt(worst / float64(runs)), nil
}
