// Package bench holds the measurement harnesses of `fedecdf bench`.
//
// They measure the speed of the DCF (package fss) and the accuracy of
// the noise mechanisms (package mechanism), raw and after smoothing.
package bench

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

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/cpuclock"
)

// FSSConfig sets what MeasureFSS times.
type FSSConfig struct {
	Bits       int           // key domain n
	Components int           // payload components m
	Keys       int           // keys summed by each batch evaluation
	Points     []int         // batch sizes B; evenly spaced points, 2^n for full domain
	MinTime    time.Duration // minimum duration of each timing
}

// DefaultFSSConfig is the configuration of `fedecdf bench fss`:
// n = 16, m = 3, B ∈ {64, 1024, 2^16}.
func DefaultFSSConfig() FSSConfig {
	return FSSConfig{Bits: 16, Components: 3, Keys: 256, Points: []int{64, 1024, 1 << 16}, MinTime: 300 * time.Millisecond}
}

// BatchFigure is the cost of fss.SumBatch at one batch size, on one goroutine.
type BatchFigure struct {
	Points          int     `json:"points"`
	Nodes           int     `json:"nodes"`
	AESBlocksPerKey int     `json:"aes_blocks_per_key"`
	NsPerKeyPoint   float64 `json:"batch_ns_per_key_point"`
	NsPerKeyNode    float64 `json:"batch_ns_per_key_node"`
	NsPerAESBlock   float64 `json:"batch_ns_per_aes_block"`
	Ratio           float64 `json:"ratio"` // median over rounds of NsPerAESBlock ÷ AES CTR ns per block timed just before
}

// FSSReport holds the figures of one MeasureFSS run; times are in
// nanoseconds of process CPU time (cpuclock.Process: a shared machine's
// other load does not count, as it does in wall time), except the
// full-domain speedup's, which are wall time, and every ratio is taken
// between figures of the same run.
type FSSReport struct {
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
	Batches            []BatchFigure `json:"batches"`
	Workers            int           `json:"workers"` // GOMAXPROCS
	FullDomainSpeedup  float64       `json:"full_domain_parallel_speedup"`
}

// MeasureFSS times the DCF's key generation, pointwise and batch evaluation and the AES
// references in one run.
func MeasureFSS(cfg FSSConfig) (FSSReport, error) {
	n, m := cfg.Bits, cfg.Components
	if fss.EncodedSize(n, m) == 0 || cfg.Keys < 1 || len(cfg.Points) == 0 {
		return FSSReport{}, fmt.Errorf("bench: fss: n = %d, m = %d, %d keys, %d batch sizes: out of range", n, m, cfg.Keys, len(cfg.Points))
	}
	r := rand.New(rand.NewPCG(1, 2))
	beta := make([]uint64, m)
	for c := range beta {
		beta[c] = r.Uint64()
	}
	alpha := r.Uint64() >> uint(64-n)
	src := rand.NewChaCha8([32]byte{1})
	rep := FSSReport{
		Bits: n, Components: m, Keys: cfg.Keys, Workers: runtime.GOMAXPROCS(0),
		KeyBytes:           fss.EncodedSize(n, m),
		KeyBytesBCG21:      (128 + n*(128+64*m+2) + 64*m + 7) / 8,
		GenAESBlocks:       2 * (n*(2+m) + (m+1)/2),
		AESCTRNsPerBlock:   ctrNsPerBlock(cfg.MinTime),
		AESBlockNsPerBlock: blockEncryptNsPerBlock(cfg.MinTime),
	}
	var genErr error
	rep.GenNs = cpuNs(cfg.MinTime, func() { _, _, genErr = fss.Gen(alpha, beta, n, src) })
	if genErr != nil {
		return FSSReport{}, genErr
	}
	keys := make([]*fss.Key, cfg.Keys)
	for i := range keys {
		if keys[i], _, genErr = fss.Gen(r.Uint64()>>uint(64-n), beta, n, src); genErr != nil {
			return FSSReport{}, genErr
		}
	}
	x := r.Uint64() >> uint(64-n)
	_, rep.EvalAESBlocks, _ = fss.BatchCost(n, m, []uint64{x})
	rep.EvalNs = cpuNs(cfg.MinTime, func() { _, genErr = fss.Eval(keys[0], x) })
	for _, count := range cfg.Points {
		fig, err := measureBatch(keys, n, m, count, cfg.MinTime)
		if err != nil {
			return FSSReport{}, err
		}
		rep.Batches = append(rep.Batches, fig)
	}
	full := evenPoints(1<<min(n, 20), n)
	acc := make([]uint64, len(full)*m)
	one := timeNs(cfg.MinTime, func() { fss.SumBatch(keys, full, acc, 1) })
	all := timeNs(cfg.MinTime, func() { fss.SumBatch(keys, full, acc, rep.Workers) })
	rep.FullDomainSpeedup = one / all
	return rep, nil
}

// measureRounds is the number of alternating (CTR, batch) timings behind
// each batch figure: the median of their ratios resists changes of load
// on a shared machine between the two timings.
const measureRounds = 5

func measureBatch(keys []*fss.Key, n, m, count int, minTime time.Duration) (BatchFigure, error) {
	if count < 1 || count > 1<<min(n, 24) {
		return BatchFigure{}, fmt.Errorf("bench: fss: batch of %d points in a domain of 2^%d", count, n)
	}
	points := evenPoints(count, n)
	nodes, perKey, err := fss.BatchCost(n, m, points)
	if err != nil {
		return BatchFigure{}, err
	}
	acc := make([]uint64, count*m)
	var ns, ratios [measureRounds]float64
	for r := range ns {
		ctr := ctrNsPerBlock(minTime / measureRounds)
		ns[r] = cpuNs(minTime/measureRounds, func() { fss.SumBatch(keys, points, acc, 1) })
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

// timeNs returns the mean duration of f in nanoseconds of wall time over
// enough calls to last at least minTime.
func timeNs(minTime time.Duration, f func()) float64 {
	return timeOn(wallClock, minTime, f)
}

// cpuNs is timeNs in process CPU time: what one goroutine's work costs,
// whatever else the machine runs meanwhile.
func cpuNs(minTime time.Duration, f func()) float64 {
	return timeOn(cpuclock.Process, minTime, f)
}

// wallClock is the time elapsed since the process started.
func wallClock() time.Duration { return time.Since(processStart) }

var processStart = time.Now()

// timeOn is timeNs on clock.
func timeOn(clock func() time.Duration, minTime time.Duration, f func()) float64 {
	f() // warm up
	for calls := 1; ; calls *= 2 {
		start := clock()
		for range calls {
			f()
		}
		if d := clock() - start; d >= minTime {
			return float64(d.Nanoseconds()) / float64(calls)
		}
	}
}

const refBlocks = 1024

// ctrNsPerBlock times the crypto/aes CTR keystream per 16-byte block, in
// process CPU time.
func ctrNsPerBlock(minTime time.Duration) float64 {
	return AESCTRNsPerBlock(cpuclock.Process, minTime)
}

// AESCTRNsPerBlock returns the time per 16-byte block of crypto/aes's CTR
// keystream, the unit of the AES work bound of DCF evaluation, timed on
// clock (wall or process CPU time, cpuclock.Process) over at least minTime.
func AESCTRNsPerBlock(clock func() time.Duration, minTime time.Duration) float64 {
	c, _ := aes.NewCipher(make([]byte, 16))
	s := cipher.NewCTR(c, make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	return timeOn(clock, minTime, func() { s.XORKeyStream(buf, buf) }) / refBlocks
}

// blockEncryptNsPerBlock times crypto/aes Block.Encrypt, one block per
// call, in process CPU time.
func blockEncryptNsPerBlock(minTime time.Duration) float64 {
	c, _ := aes.NewCipher(make([]byte, 16))
	buf := make([]byte, 16*refBlocks)
	return cpuNs(minTime, func() {
		for i := 0; i < len(buf); i += 16 {
			c.Encrypt(buf[i:i+16], buf[i:i+16])
		}
	}) / refBlocks
}

// WriteText writes the report as a table.
func (r FSSReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DCF (BCG+21), n = %d, m = %d, λ = 128, %d keys per batch, GOMAXPROCS = %d; times in process CPU ns\n", r.Bits, r.Components, r.Keys, r.Workers)
	fmt.Fprintf(tw, "key_bytes\t%d\t(BCG+21 formula %d + 4 header bytes)\n", r.KeyBytes, r.KeyBytesBCG21)
	fmt.Fprintf(tw, "gen_ns\t%.0f\t(%d AES blocks)\n", r.GenNs, r.GenAESBlocks)
	fmt.Fprintf(tw, "eval_ns\t%.0f\t(%d AES blocks, one point)\n", r.EvalNs, r.EvalAESBlocks)
	fmt.Fprintf(tw, "aes_ctr_ns_per_block\t%.3f\t(crypto/aes CTR keystream)\n", r.AESCTRNsPerBlock)
	fmt.Fprintf(tw, "aes_block_encrypt_ns_per_block\t%.3f\t(crypto/aes Block.Encrypt, ratio %.2f)\n", r.AESBlockNsPerBlock, r.AESBlockNsPerBlock/r.AESCTRNsPerBlock)
	fmt.Fprintln(tw, "\nbatch (one goroutine)\t\t\t\t\t\t")
	fmt.Fprintln(tw, "B\tnodes\taes_blocks_per_key\tbatch_ns_per_key_point\tns_per_key_node\tns_per_aes_block\tratio")
	for _, b := range r.Batches {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.2f\t%.2f\t%.3f\t%.2f\n", b.Points, b.Nodes, b.AESBlocksPerKey, b.NsPerKeyPoint, b.NsPerKeyNode, b.NsPerAESBlock, b.Ratio)
	}
	fmt.Fprintf(tw, "\nfull-domain speedup on %d goroutines\t%.2f\t(wall time)\n", r.Workers, r.FullDomainSpeedup)
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r FSSReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
