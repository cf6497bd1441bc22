package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/cpuclock"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/vdcf"
)

// VerifyConfig sets what MeasureVerify times.
type VerifyConfig struct {
	Bins    int           // grid size N
	Reports int           // reports evaluated per timing
	MinTime time.Duration // minimum duration of each timing
	// Probability has the verified reports carry the probability too
	// (vdcf.NewWithProbability), as a dataset that collects it does.
	Probability bool
}

// DefaultVerifyConfig is the configuration of `fedecdf bench fss --verify`:
// N = 1024 bins, 256 reports.
func DefaultVerifyConfig() VerifyConfig {
	return VerifyConfig{Bins: 1024, Reports: 256, MinTime: 300 * time.Millisecond}
}

// VerifyReport compares, in one run, the unverified DCF upload (fss.Key
// over Z_2^64 with the payload.NumComponents components, folded by
// fss.PrefixDomain.SumPrefixes as server/dcf.go does) with the verified
// one (package vdcf). Times are process CPU nanoseconds per report at one
// server, over all its goroutines; each is the median of measureRounds
// timings, unverified and verified alternating.
type VerifyReport struct {
	Bins              int        `json:"bins"`
	Reports           int        `json:"reports"`
	Workers           int        `json:"workers"`
	Probability       bool       `json:"verified_probability"`      // the verified reports carry the probability
	UploadBytes       int        `json:"upload_bytes_per_server"`   // unverified key
	VerifiedBytes     [2]int     `json:"verified_upload_bytes"`     // leader's, helper's share: field key + seed + explicit shares
	ExchangeBytes     int        `json:"exchange_bytes_per_server"` // verification messages sent per report
	GenNs             float64    `json:"gen_ns"`                    // party: fss.PrefixDomain.Gen
	EncodeNs          float64    `json:"verified_encode_ns"`        // party: vdcf Scheme.Encode
	EvalNs            float64    `json:"eval_cpu_ns"`               // server, unverified: summed full-domain evaluation
	FieldEvalNs       float64    `json:"field_eval_cpu_ns"`         // server, verified: per-key full-domain evaluation, sketched as it goes (vdcf Server.PrepareAll)
	CheckNs           float64    `json:"check_cpu_ns"`              // server: Exchange, Finish
	FoldNs            float64    `json:"fold_cpu_ns"`               // server: adding an accepted report's summed prefixes (vdcf.Scheme.Summed)
	VerifiedNs        float64    `json:"verified_cpu_ns"`           // FieldEvalNs + CheckNs + FoldNs
	AddedOverEval     float64    `json:"added_over_eval"`           // (VerifiedNs − EvalNs) / EvalNs
	CheckOverEval     float64    `json:"check_over_field_eval"`     // CheckNs / FieldEvalNs
	UploadRatios      [2]float64 `json:"upload_ratios"`             // VerifiedBytes / UploadBytes, leader's and helper's: goal ≤ 2
	UploadRatio       float64    `json:"upload_ratio"`              // the two servers' mean VerifiedBytes / UploadBytes
	AcceptedAllHonest bool       `json:"accepted_all_honest"`
}

// verifyBench holds the reports and servers MeasureVerify times.
type verifyBench struct {
	dom      fss.PrefixDomain
	prefixes []int
	keys     []*fss.Key
	scheme   *vdcf.Scheme
	leader   *vdcf.Server
	nonces   [][vdcf.NonceSize]byte
	shares   []*vdcf.Share
	peer     [][2][]byte // the helper's first and second messages per report
}

// MeasureVerify times the unverified and the verified DCF upload at one
// server, and the party's key generation for both, in one run.
func MeasureVerify(cfg VerifyConfig) (VerifyReport, error) {
	if cfg.Bins < 2 || cfg.Reports < 1 {
		return VerifyReport{}, fmt.Errorf("bench: verify: %d bins and %d reports: want at least 2 bins and 1 report", cfg.Bins, cfg.Reports)
	}
	b, err := newVerifyBench(cfg)
	if err != nil {
		return VerifyReport{}, err
	}
	n := b.dom.Bits()
	rep := VerifyReport{
		Bins: cfg.Bins, Reports: cfg.Reports, Workers: runtime.GOMAXPROCS(0), Probability: cfg.Probability,
		UploadBytes:   fss.EncodedSize(n, payload.NumComponents),
		VerifiedBytes: [2]int{b.scheme.ShareSize(0), b.scheme.ShareSize(1)},
		ExchangeBytes: b.scheme.Message1Size() + vdcf.Message2Size,
	}
	src := rand.NewChaCha8([32]byte{3})
	beta := []uint64{1, 1, 0, 1 << 31}
	rep.GenNs = timeOn(cpuclock.Process, cfg.MinTime, func() { b.dom.Gen(cfg.Bins/3, beta, src) })
	rep.EncodeNs = timeOn(cpuclock.Process, cfg.MinTime, func() { b.encode(cfg.Bins/3, 1, 1<<31, src) })
	var eval, field, check, fold [measureRounds]float64
	rep.AcceptedAllHonest = true
	per := float64(cfg.Reports)
	for r := range measureRounds {
		acc := make([]uint64, cfg.Bins*payload.NumComponents)
		eval[r] = timeOn(cpuclock.Process, cfg.MinTime/measureRounds, func() { b.dom.SumPrefixes(b.keys, b.prefixes, acc) }) / per
		var prepared []vdcf.Prepared
		field[r] = timeOn(cpuclock.Process, cfg.MinTime/measureRounds, func() { prepared, err = b.leader.PrepareAll(b.nonces, b.shares) }) / per
		if err != nil {
			return VerifyReport{}, err
		}
		check[r] = timeOn(cpuclock.Process, cfg.MinTime/measureRounds, func() {
			if !b.check(prepared) {
				rep.AcceptedAllHonest = false
			}
		}) / per
		agg, err := b.scheme.NewAggregate(b.scheme.Summed())
		if err != nil {
			return VerifyReport{}, err
		}
		fold[r] = timeOn(cpuclock.Process, cfg.MinTime/measureRounds, func() {
			for _, p := range prepared {
				if err := agg.AddSummed(p.Summed); err != nil {
					panic(err) // unreachable: PrepareAll's summed vectors fit the scheme's aggregate
				}
			}
		}) / per
	}
	rep.EvalNs, rep.FieldEvalNs, rep.CheckNs, rep.FoldNs = median(eval[:]), median(field[:]), median(check[:]), median(fold[:])
	rep.VerifiedNs = rep.FieldEvalNs + rep.CheckNs + rep.FoldNs
	rep.AddedOverEval = (rep.VerifiedNs - rep.EvalNs) / rep.EvalNs
	rep.CheckOverEval = rep.CheckNs / rep.FieldEvalNs
	for id, n := range rep.VerifiedBytes {
		rep.UploadRatios[id] = float64(n) / float64(rep.UploadBytes)
	}
	rep.UploadRatio = (rep.UploadRatios[0] + rep.UploadRatios[1]) / 2
	return rep, nil
}

// newVerifyBench draws cfg.Reports random records as unverified keys and
// verified reports, and the helper's messages for each.
func newVerifyBench(cfg VerifyConfig) (*verifyBench, error) {
	dom, err := fss.NewPrefixDomain(cfg.Bins)
	if err != nil {
		return nil, err
	}
	newScheme := vdcf.New
	if cfg.Probability {
		newScheme = vdcf.NewWithProbability
	}
	scheme, err := newScheme(cfg.Bins)
	if err != nil {
		return nil, err
	}
	src := rand.NewChaCha8([32]byte{4})
	r := rand.New(src)
	var key [vdcf.KeySize]byte
	src.Read(key[:])
	leader, _ := scheme.NewServer(0, key)
	helper, _ := scheme.NewServer(1, key)
	b := &verifyBench{dom: dom, prefixes: make([]int, cfg.Bins), scheme: scheme, leader: leader}
	for j := range b.prefixes {
		b.prefixes[j] = j
	}
	for range cfg.Reports {
		bin, label := r.IntN(cfg.Bins), r.IntN(2)
		prob := r.Uint64N(payload.ProbabilityScale + 1)
		k0, _, err := dom.Gen(bin, []uint64{1, uint64(label), uint64(1 - label), prob}, src)
		if err != nil {
			return nil, err
		}
		b.keys = append(b.keys, k0)
		rp, err := b.encode(bin, label, prob, src)
		if err != nil {
			return nil, err
		}
		peer, err := peerMessages(leader, helper, rp)
		if err != nil {
			return nil, err
		}
		sh, _ := leader.DecodeShare(rp.Shares[0])
		b.nonces, b.shares, b.peer = append(b.nonces, rp.Nonce), append(b.shares, sh), append(b.peer, peer)
	}
	return b, nil
}

// encode is the verified report of (bin, label, prob), the probability
// left out unless the scheme carries it.
func (b *verifyBench) encode(bin, label int, prob uint64, src io.Reader) (vdcf.Report, error) {
	if b.scheme.HasProbability() {
		return b.scheme.EncodeProbability(bin, label == 1, prob, src)
	}
	return b.scheme.Encode(bin, label == 1, src)
}

// peerMessages runs both servers on r and returns the helper's two
// messages to the leader.
func peerMessages(leader, helper *vdcf.Server, r vdcf.Report) ([2][]byte, error) {
	var out [2][]byte
	var pend [2]*vdcf.Pending
	var first [2][]byte
	for id, v := range []*vdcf.Server{leader, helper} {
		sh, err := v.DecodeShare(r.Shares[id])
		if err != nil {
			return out, err
		}
		prepared, err := v.PrepareAll([][vdcf.NonceSize]byte{r.Nonce}, []*vdcf.Share{sh})
		if err != nil {
			return out, err
		}
		pend[id], first[id] = prepared[0].Pending, prepared[0].Message
	}
	second, err := pend[1].Exchange(first[0])
	if err != nil {
		return out, err
	}
	return [2][]byte{first[1], second}, nil
}

// check runs the leader's side of every report's verification from its
// preparation against the helper's recorded messages and reports
// whether all were accepted.
func (b *verifyBench) check(prepared []vdcf.Prepared) bool {
	ok := true
	for i := range b.shares {
		p := *prepared[i].Pending // a copy: each timing round decides again
		_, err := p.Exchange(b.peer[i][0])
		if err == nil {
			err = p.Finish(b.peer[i][1])
		}
		ok = ok && err == nil
	}
	return ok
}

// WriteText writes the report as a table.
func (r VerifyReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DCF upload, unverified (Z_2^64, m = %d) vs verified (F_p, package vdcf, probability %v), N = %d bins, %d reports, GOMAXPROCS = %d\n",
		payload.NumComponents, r.Probability, r.Bins, r.Reports, r.Workers)
	fmt.Fprintf(tw, "upload_bytes_per_server\t%d\t→ %d leader, %d helper verified\t(×%.2f, ×%.2f; mean ×%.2f)\n",
		r.UploadBytes, r.VerifiedBytes[0], r.VerifiedBytes[1], r.UploadRatios[0], r.UploadRatios[1], r.UploadRatio)
	fmt.Fprintf(tw, "exchange_bytes_per_server\t0\t→ %d verified\t(two messages)\n", r.ExchangeBytes)
	fmt.Fprintf(tw, "party_gen_ns\t%.0f\t→ %.0f verified\t\n", r.GenNs, r.EncodeNs)
	fmt.Fprintf(tw, "server_cpu_ns_per_report\t%.0f\t→ %.0f verified\t(+%.2f× the unverified evaluation)\n", r.EvalNs, r.VerifiedNs, r.AddedOverEval)
	fmt.Fprintf(tw, "  field_eval_cpu_ns\t%.0f\t\t\n", r.FieldEvalNs)
	fmt.Fprintf(tw, "  check_cpu_ns\t%.0f\t\t(%.3f× the field evaluation)\n", r.CheckNs, r.CheckOverEval)
	fmt.Fprintf(tw, "  fold_cpu_ns\t%.0f\t\t\n", r.FoldNs)
	fmt.Fprintf(tw, "all honest reports accepted\t%v\t\t\n", r.AcceptedAllHonest)
	return tw.Flush()
}

// WriteJSON writes the report as indented JSON.
func (r VerifyReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
