package fss

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// MeasureConfig sets what Measure times.
type MeasureConfig struct {
	Bits       int           // key domain n
	Components int           // payload components m
	Keys       int           // keys summed by each batch evaluation
	Points     []int         // batch sizes B; evenly spaced points, 2^n for full domain
	MinTime    time.Duration // minimum duration of each timing
}

// DefaultMeasureConfig is the configuration of `fedecdf bench fss`:
// n = 16, m = 3, B ∈ {64, 1024, 2^16}.
func DefaultMeasureConfig() MeasureConfig {
	return MeasureConfig{Bits: 16, Components: 3, Keys: 256, Points: []int{64, 1024, 1 << 16}, MinTime: 300 * time.Millisecond}
}

// BatchFigure is the cost of SumBatch at one batch size, on one goroutine.
type BatchFigure struct {
	Points          int     `json:"points"`
	Nodes           int     `json:"nodes"`
	AESBlocksPerKey int     `json:"aes_blocks_per_key"`
	NsPerKeyPoint   float64 `json:"batch_ns_per_key_point"`
	NsPerKeyNode    float64 `json:"batch_ns_per_key_node"`
	NsPerAESBlock   float64 `json:"batch_ns_per_aes_block"`
	Ratio           float64 `json:"ratio"` // median over rounds of NsPerAESBlock ÷ AES CTR ns per block timed just before
}

// Report holds the figures of one Measure run; times are in nanoseconds
// and every ratio is taken between figures of the same run.
type Report struct {
	Bits               int           `json:"nbits"`
	Components         int           `json:"m"`
	Keys               int           `json:"keys"`
	KeyBytes           int           `json:"key_bytes"`
	KeyBytesBCG21      int           `json:"key_bytes_bcg21"` // ⌈(λ + n(λ+ℓ+2) + ℓ)/8⌉
	GenNs              float64       `json:"gen_ns"`
	GenAESBlocks       int           `json:"gen_aes_blocks"`
	EvalNs             float64       `json:"eval_ns"`
	EvalAESBlocks      int           `json:"eval_aes_blocks"`
	AESCTRNsPerBlock   float64       `json:"aes_ctr_ns_per_block"`
	AESBlockNsPerBlock float64       `json:"aes_block_encrypt_ns_per_block"` // crypto/aes Block.Encrypt
	PRGNsPerBlock      float64       `json:"prg_ns_per_block"`               // this package's MMO, 1024-block batches
	Batches            []BatchFigure `json:"batches"`
	Workers            int           `json:"workers"` // GOMAXPROCS
	FullDomainSpeedup  float64       `json:"full_domain_parallel_speedup"`
}

// Measure times key generation, pointwise and batch evaluation and the AES
// references in one run.
func Measure(cfg MeasureConfig) (Report, error) {
	n, m := cfg.Bits, cfg.Components
	if EncodedSize(n, m) == 0 || cfg.Keys < 1 || len(cfg.Points) == 0 {
		return Report{}, fmt.Errorf("fss: Measure: n = %d, m = %d, %d keys, %d batch sizes: out of range", n, m, cfg.Keys, len(cfg.Points))
	}
	r := rand.New(rand.NewPCG(1, 2))
	beta := make([]uint64, m)
	for c := range beta {
		beta[c] = r.Uint64()
	}
	alpha := r.Uint64() >> uint(64-n)
	src := rand.NewChaCha8([32]byte{1})
	rep := Report{
		Bits: n, Components: m, Keys: cfg.Keys, Workers: runtime.GOMAXPROCS(0),
		KeyBytes:           EncodedSize(n, m),
		KeyBytesBCG21:      (128 + n*(128+64*m+2) + 64*m + 7) / 8,
		GenAESBlocks:       2 * (n*(2+m) + (m+1)/2),
		AESCTRNsPerBlock:   ctrNsPerBlock(cfg.MinTime),
		AESBlockNsPerBlock: blockEncryptNsPerBlock(cfg.MinTime),
		PRGNsPerBlock:      prgNsPerBlock(cfg.MinTime),
	}
	var genErr error
	rep.GenNs = timeNs(cfg.MinTime, func() { _, _, genErr = Gen(alpha, beta, n, src) })
	if genErr != nil {
		return Report{}, genErr
	}
	keys := make([]*Key, cfg.Keys)
	for i := range keys {
		if keys[i], _, genErr = Gen(r.Uint64()>>uint(64-n), beta, n, src); genErr != nil {
			return Report{}, genErr
		}
	}
	x := r.Uint64() >> uint(64-n)
	_, rep.EvalAESBlocks, _ = BatchCost(n, m, []uint64{x})
	rep.EvalNs = timeNs(cfg.MinTime, func() { _, genErr = Eval(keys[0], x) })
	for _, count := range cfg.Points {
		fig, err := measureBatch(keys, n, m, count, cfg.MinTime)
		if err != nil {
			return Report{}, err
		}
		rep.Batches = append(rep.Batches, fig)
	}
	full := evenPoints(1<<min(n, 20), n)
	acc := make([]uint64, len(full)*m)
	one := timeNs(cfg.MinTime, func() { sumBatch(keys, full, acc, false, 1) })
	all := timeNs(cfg.MinTime, func() { sumBatch(keys, full, acc, false, rep.Workers) })
	rep.FullDomainSpeedup = one / all
	return rep, nil
}

// measureRounds is the number of alternating (CTR, batch) timings behind
// each batch figure: the median of their ratios resists changes of load
// on a shared machine between the two timings.
const measureRounds = 5

func measureBatch(keys []*Key, n, m, count int, minTime time.Duration) (BatchFigure, error) {
	if count < 1 || count > 1<<min(n, 24) {
		return BatchFigure{}, fmt.Errorf("fss: Measure: batch of %d points in a domain of 2^%d", count, n)
	}
	points := evenPoints(count, n)
	nodes, perKey, err := BatchCost(n, m, points)
	if err != nil {
		return BatchFigure{}, err
	}
	acc := make([]uint64, count*m)
	var ns, ratios [measureRounds]float64
	for r := range ns {
		ctr := ctrNsPerBlock(minTime / measureRounds)
		ns[r] = timeNs(minTime/measureRounds, func() { sumBatch(keys, points, acc, false, 1) })
		ratios[r] = ns[r] / float64(len(keys)*perKey) / ctr
	}
	t := median(ns[:])
	return BatchFigure{
		Points: count, Nodes: nodes, AESBlocksPerKey: perKey,
		NsPerKeyPoint: t / float64(len(keys)*count),
		NsPerKeyNode:  t / float64(len(keys)*nodes),
		NsPerAESBlock: t / float64(len(keys)*perKey),
		Ratio:         median(ratios[:]),
	}, nil
}

// median returns the median of xs (odd length), reordering xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// evenPoints returns count points spread evenly over [0, 2^n):
// ⌊j·2^n / count⌋ for j < count ≤ 2^n.
func evenPoints(count, n int) []uint64 {
	points := make([]uint64, count)
	for j := range points {
		hi, lo := uint64(j), uint64(0) // j·2^64
		if n < 64 {
			hi, lo = bits.Mul64(uint64(j), 1<<uint(n))
		}
		points[j], _ = bits.Div64(hi, lo, uint64(count))
	}
	return points
}

// timeNs returns the mean duration of f in nanoseconds over enough calls to
// last at least minTime.
func timeNs(minTime time.Duration, f func()) float64 {
	f() // warm up
	for calls := 1; ; calls *= 2 {
		start := time.Now()
		for range calls {
			f()
		}
		if d := time.Since(start); d >= minTime {
			return float64(d.Nanoseconds()) / float64(calls)
		}
	}
}

const refBlocks = 1024

// ctrNsPerBlock times the crypto/aes CTR keystream per 16-byte block.
func ctrNsPerBlock(minTime time.Duration) float64 {
	c, _ := aes.NewCipher(make([]byte, 16))
	s := cipher.NewCTR(c, make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	return timeNs(minTime, func() { s.XORKeyStream(buf, buf) }) / refBlocks
}

// blockEncryptNsPerBlock times crypto/aes Block.Encrypt, one block per call.
func blockEncryptNsPerBlock(minTime time.Duration) float64 {
	c, _ := aes.NewCipher(make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	return timeNs(minTime, func() {
		for i := 0; i < len(buf); i += 16 {
			c.Encrypt(buf[i:i+16], buf[i:i+16])
		}
	}) / refBlocks
}

// prgNsPerBlock times this package's MMO hash on batches of blocks.
func prgNsPerBlock(minTime time.Duration) float64 {
	seeds, out := make([]block, refBlocks), make([]block, refBlocks)
	return timeNs(minTime, func() { prgNode(1, seeds, out, nil, 0, nil) }) / refBlocks
}

// WriteText writes the report as a table.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DCF (BCG+21), n = %d, m = %d, λ = 128, %d keys per batch, GOMAXPROCS = %d\n", r.Bits, r.Components, r.Keys, r.Workers)
	fmt.Fprintf(tw, "key_bytes\t%d\t(BCG+21 formula %d + 4 header bytes)\n", r.KeyBytes, r.KeyBytesBCG21)
	fmt.Fprintf(tw, "gen_ns\t%.0f\t(%d AES blocks)\n", r.GenNs, r.GenAESBlocks)
	fmt.Fprintf(tw, "eval_ns\t%.0f\t(%d AES blocks, one point)\n", r.EvalNs, r.EvalAESBlocks)
	fmt.Fprintf(tw, "aes_ctr_ns_per_block\t%.3f\t(crypto/aes CTR keystream)\n", r.AESCTRNsPerBlock)
	fmt.Fprintf(tw, "aes_block_encrypt_ns_per_block\t%.3f\t(crypto/aes Block.Encrypt, ratio %.2f)\n", r.AESBlockNsPerBlock, r.AESBlockNsPerBlock/r.AESCTRNsPerBlock)
	fmt.Fprintf(tw, "prg_ns_per_block\t%.3f\t(MMO-σ PRG, ratio %.2f)\n", r.PRGNsPerBlock, r.PRGNsPerBlock/r.AESCTRNsPerBlock)
	fmt.Fprintln(tw, "\nbatch (one goroutine)\t\t\t\t\t\t")
	fmt.Fprintln(tw, "B\tnodes\taes_blocks_per_key\tbatch_ns_per_key_point\tns_per_key_node\tns_per_aes_block\tratio")
	for _, b := range r.Batches {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.2f\t%.3f\t%.2f\n", b.Points, b.Nodes, b.AESBlocksPerKey, b.NsPerKeyPoint, b.NsPerKeyNode, b.NsPerAESBlock, b.Ratio)
	}
	fmt.Fprintf(tw, "\nfull-domain speedup on %d goroutines\t%.2f\n", r.Workers, r.FullDomainSpeedup)
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
