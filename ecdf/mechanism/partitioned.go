package mechanism

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/noise"
)

// partitioned is the partitioned release: the grid is cut into
// consecutive parts of partitionBins(N) bins, each part's histogram is
// released by its own pure mechanism ("auto" over the part's bins), and
// prefix i of part j (bins o_j+1 … o_j+n_j) is
//
//	prefix(i) = Σ_{l<j} part_l(n_l) + part_j(i − o_j),
//
// the released totals of the earlier parts plus the within-part prefix.
// Its noise is the same sum of the parts' independent noises, so
//
//	PrefixVariance(i) = Σ_{l<j} V_l(n_l) + V_j(i − o_j),
//
// V_l the prefix variance of part l's mechanism, exactly.
//
// Privacy (package documentation, "The partitioned release"): every
// part's mechanism is built under add/remove, at ε under add/remove and
// at ε/2 under replace-one. An instance lies in one bin, hence in one
// part: adding or removing it changes that part's histogram by one
// instance and no other part's, so the release is ε-DP under add/remove
// by parallel composition; moving it changes at most two parts by one
// addition and one removal, ε/2 each.
//
// Nodes. The parts' node noises have unequal variances (a shallow part
// has a smaller sensitivity, hence a smaller Laplace scale), while
// Terms speaks of variables of one variance NodeVariance. The node
// variables of part j are therefore its node noises scaled by
// r_j = √(V_ref/V_j) (V_j part j's node variance, V_ref part 1's), with
// coefficient ±1/r_j in Terms: the prefix noise and every second moment
// are unchanged, and a generalised least squares over Terms (smoothing
// tree-l2) weights each node by its own variance, as it should. Part j's
// nodes are numbered after those of parts 1…j−1.
type partitioned struct {
	parts    []Mechanism
	offsets  []int     // offsets[j]: bins before part j; offsets[len(parts)] = N
	nodeOff  []int     // nodeOff[j]: node variables before part j
	coef     []float64 // coef[j] = 1/r_j = √(V_j/V_ref)
	before   []float64 // before[j] = Σ_{l<j} V_l(n_l)
	epsilon  float64
	relation Relation
	name     string
	meanVar  float64
	partBins []int
}

// partitionedNoiseDomain separates the derivation of the parts' seeds
// from the other uses of a release seed: the ASCII bytes "part".
const partitionedNoiseDomain uint32 = 0x70617274

// partitionBins returns the sizes of the parts of a partitioned release
// over n bins: ⌈n/6⌉ at each end of the grid and the rest between, one
// part when n < 3. The rule depends on n alone, never on the data.
//
// Why the ends. A ROC curve's area weighs the positives' prefixes by the
// FPR they span and the negatives' by the TPR: with most negatives at
// low scores and the positives spread above, the prefixes at the two
// ends of a linear grid of probabilities carry most of the area, and a
// part of at most ⌈n/6⌉ bins is one or two levels of leaves for the
// mechanism "auto" chooses (at n ≤ 151: one level, add/remove
// sensitivity 1 instead of 2), so its prefixes sum fewer nodes of a
// smaller scale than those of one deep tree over the grid. The middle
// prefixes pay the lower part's total noise on top of their own. Ends of
// n/16 … n/4 bins give close ROC areas (EXPERIMENTS.md, "Private ROC
// curves"); the symmetric ⌈n/6⌉ assumes nothing about which class is
// the minority.
func partitionBins(n int) []int {
	if n < 3 {
		return []int{n}
	}
	end := (n + 5) / 6
	return []int{end, n - 2*end, end}
}

// newPartitioned returns the partitioned release for p.Bins prefixes at
// ε = p.Epsilon under p.Relation, with p.Unit integer units per record.
// It is pure ε-DP: p.Delta must be 0, and p.K 0 (each part chooses its
// own mechanism and arity).
func newPartitioned(p Params) (*partitioned, error) {
	if err := checkParams("partitioned", p); err != nil {
		return nil, err
	}
	switch {
	case p.Delta != 0:
		return nil, fmt.Errorf("partitioned: delta %v: the partitioned release is pure ε-DP; use δ = 0 or another mechanism", p.Delta)
	case p.K != 0:
		return nil, fmt.Errorf("partitioned: k %d: each part chooses its own arity; use k 0", p.K)
	}
	q := p
	q.Name, q.Relation = "auto", AddRemove
	if p.Relation == ReplaceOne {
		q.Epsilon = p.Epsilon / 2
	}
	m := &partitioned{epsilon: p.Epsilon, relation: p.Relation, partBins: partitionBins(p.Bins), offsets: []int{0}, nodeOff: []int{0}}
	var names []string
	var sum, maxVar float64
	for j, bins := range m.partBins {
		q.Bins = bins
		part, err := newAuto(q)
		if err != nil {
			return nil, fmt.Errorf("partitioned: part %d (%d bins): %w", j+1, bins, err)
		}
		m.parts = append(m.parts, part)
		m.offsets = append(m.offsets, m.offsets[j]+bins)
		m.nodeOff = append(m.nodeOff, m.nodeOff[j]+part.Nodes())
		m.coef = append(m.coef, math.Sqrt(part.NodeVariance()/m.parts[0].NodeVariance()))
		m.before = append(m.before, sum)
		sum += part.PrefixVariance(bins)
		maxVar = max(maxVar, maxPrefixVariance(part))
		m.meanVar += float64(bins) * (m.before[j] + part.MeanVariance())
		names = append(names, fmt.Sprintf("%d:%s", bins, part.Name()))
	}
	m.meanVar /= float64(p.Bins)
	m.name = "partitioned(" + strings.Join(names, ",") + ")"
	if err := checkNoise("partitioned", p, sum+maxVar); err != nil {
		return nil, err
	}
	return m, nil
}

// maxPrefixVariance bounds the largest prefix variance of a part, a
// tree or k-ary mechanism (what "auto" chooses when δ = 0).
func maxPrefixVariance(m Mechanism) float64 {
	switch m := m.(type) {
	case *kary:
		return float64(m.h*m.hi) * m.NodeVariance()
	case *tree:
		return m.MeanVariance()
	}
	panic(fmt.Sprintf("partitioned: unexpected part mechanism %s", m.Name()))
}

// Name returns "partitioned(n₁:m₁,n₂:m₂,n₃:m₃)", the parts' sizes and
// mechanisms in grid order.
func (m *partitioned) Name() string { return m.name }

// Bins returns N.
func (m *partitioned) Bins() int { return m.offsets[len(m.parts)] }

// Epsilon returns ε of the guarantee under Relation.
func (m *partitioned) Epsilon() float64 { return m.epsilon }

// Delta returns 0: the partitioned release is pure ε-DP.
func (m *partitioned) Delta() float64 { return 0 }

// Relation returns the neighbouring relation of the guarantee.
func (m *partitioned) Relation() Relation { return m.relation }

// part returns the part holding prefix i and i's index within it. It
// panics unless 1 ≤ i ≤ N, as an out-of-range index does.
func (m *partitioned) part(i int) (j, local int) {
	if i < 1 || i > m.Bins() {
		panic(fmt.Sprintf("%s: prefix %d out of range [1, %d]", m.name, i, m.Bins()))
	}
	for i > m.offsets[j+1] {
		j++
	}
	return j, i - m.offsets[j]
}

// PrefixVariance returns Σ_{l<j} V_l(n_l) + V_j(i − o_j) for prefix i
// in part j.
func (m *partitioned) PrefixVariance(i int) float64 {
	j, local := m.part(i)
	return m.before[j] + m.parts[j].PrefixVariance(local)
}

// MeanVariance returns the exact mean of PrefixVariance:
// (1/N)·Σ_j n_j·(Σ_{l<j} V_l(n_l) + mean_j), mean_j part j's MeanVariance.
func (m *partitioned) MeanVariance() float64 { return m.meanVar }

// Nodes returns the number of node variables of all parts together.
func (m *partitioned) Nodes() int { return m.nodeOff[len(m.parts)] }

// NodeVariance returns the variance of every node variable: that of the
// first part's node noise (see partitioned, Nodes).
func (m *partitioned) NodeVariance() float64 { return m.parts[0].NodeVariance() }

// Terms appends the terms of the earlier parts' totals and of prefix
// i − o_j of its part j, each part's nodes renumbered after the earlier
// parts' and its coefficients multiplied by √(V_j/V_ref).
func (m *partitioned) Terms(i int, dst []Term) []Term {
	j, local := m.part(i)
	for l := range j {
		dst = m.partTerms(l, m.partBins[l], dst)
	}
	return m.partTerms(j, local, dst)
}

func (m *partitioned) partTerms(j, local int, dst []Term) []Term {
	start := len(dst)
	dst = m.parts[j].Terms(local, dst)
	for k := start; k < len(dst); k++ {
		dst[k].Node += m.nodeOff[j]
		dst[k].Coef *= m.coef[j]
	}
	return dst
}

// NewRelease draws every part's release, part j (0-based) from the seed
// partSeed(seed, j); each part draws its nodes from that seed's streams
// (its own domains), before NewRelease returns.
func (m *partitioned) NewRelease(seed [32]byte) Release { return m.release(seed, true) }

func (m *partitioned) release(seed [32]byte, fixed bool) Release {
	r := &partitionedRelease{m: m, before: make([]int64, len(m.parts))}
	var sum int64
	for j, part := range m.parts {
		rel := newRelease(part, partSeed(seed, j), fixed)
		r.parts = append(r.parts, rel)
		r.before[j] = sum
		sum += rel.PrefixNoise(m.partBins[j])
	}
	return r
}

// partSeed derives the seed of part j's release: the first 32 bytes of
// the stream noise.Seed(seed).Stream(partitionedNoiseDomain, j), so
// that the parts' noises are independent.
func partSeed(seed [32]byte, j int) [32]byte {
	st := noise.Seed(seed).Stream(partitionedNoiseDomain, uint64(j))
	var out [32]byte
	for i := 0; i < len(out); i += 8 {
		v := st.Uint64()
		for k := range 8 {
			out[i+k] = byte(v >> (8 * k))
		}
	}
	return out
}

// partitionedRelease holds the parts' releases and the noise of the
// totals before each part. It is read-only, hence safe for concurrent
// use.
type partitionedRelease struct {
	m      *partitioned
	parts  []Release
	before []int64
}

// PrefixNoise returns the earlier parts' total noise plus part j's noise
// at prefix i − o_j. It panics unless 1 ≤ i ≤ N.
func (r *partitionedRelease) PrefixNoise(i int) int64 {
	j, local := r.m.part(i)
	return r.before[j] + r.parts[j].PrefixNoise(local)
}
