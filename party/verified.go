package party

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// VerifiedReport returns the party's one-shot report for the additive
// backend (package internal/verify): its (bin, label) as a one-hot
// Prio3 histogram over class × bin, sharded for the two servers, with the
// report ID as the nonce; randomness from rand, crypto/rand when nil. The
// probability component is not carried.
func (p *Party) VerifiedReport(rand io.Reader) (Report, error) {
	return p.VerifiedReportAt(p.report, rand)
}

// VerifiedReportAt is VerifiedReport under the report ID id instead of
// the party's own: a party that derives its IDs (a rerun of a file must
// send the same reports) gives them here.
func (p *Party) VerifiedReportAt(id core.ID, rand io.Reader) (Report, error) {
	s, err := verify.New(p.bins)
	r, err := encodeAt[verify.Report](p, id, s, err, rand)
	return fromVerify(r), err
}

// encoder is a verified scheme's party side (verify.Scheme, vdcf.Scheme).
type encoder[R any] interface {
	EncodeAt(nonce [16]byte, bin int, label bool, rnd io.Reader) (R, error)
}

// encodeAt encodes the party's (bin, label) with s, made with error err,
// under the report ID id; randomness from rand, crypto/rand when nil.
func encodeAt[R any](p *Party, id core.ID, s encoder[R], err error, rand io.Reader) (R, error) {
	var r R
	if err != nil {
		return r, fmt.Errorf("party: %w", err)
	}
	if rand == nil {
		rand = crand.Reader
	}
	if r, err = s.EncodeAt(id, p.bin-1, p.payload[1] == 1, rand); err != nil {
		return r, fmt.Errorf("party: report %v: %w", id, err)
	}
	return r, nil
}

// UploadVerified sends the party's verified report, one input share to
// each server. After this the party may go offline: the servers verify
// it between themselves and answer every query alone.
func (p *Party) UploadVerified(ctx context.Context, s Servers) error {
	r, err := p.VerifiedReport(nil)
	if err != nil {
		return err
	}
	return Upload(ctx, s, r)
}

// VerifiedKeys returns the party's one-shot report for the verified dcf
// backend (package internal/vdcf): a pair of field DCF keys of its bin,
// count and label, and its probability if the dataset collects it
// (probability; 0 for a party without one, as in an unverified key),
// with correlated randomness the servers check them with, the report ID
// as the nonce; randomness from rand, crypto/rand when nil.
func (p *Party) VerifiedKeys(probability bool, rand io.Reader) (Report, error) {
	return p.VerifiedKeysAt(p.report, probability, rand)
}

// VerifiedKeysAt is VerifiedKeys under the report ID id instead of the
// party's own (VerifiedReportAt).
func (p *Party) VerifiedKeysAt(id core.ID, probability bool, rand io.Reader) (Report, error) {
	var r vdcf.Report
	if !probability {
		s, err := vdcf.New(p.bins)
		r, err = encodeAt[vdcf.Report](p, id, s, err, rand)
		return fromVDCF(r), err
	}
	s, err := vdcf.NewWithProbability(p.bins)
	r, err = encodeAt[vdcf.Report](p, id, withProbability{s, p.payload[payload.Probability]}, err, rand)
	return fromVDCF(r), err
}

// withProbability is the encoder of a vdcf scheme that carries the
// probability, for a party's fixed-point probability prob.
type withProbability struct {
	s    *vdcf.Scheme
	prob uint64
}

func (w withProbability) EncodeAt(nonce [16]byte, bin int, label bool, rnd io.Reader) (vdcf.Report, error) {
	return w.s.EncodeProbabilityAt(nonce, bin, label, w.prob, rnd)
}

// UploadVerifiedKeys sends the party's verified DCF report, one share to
// each server, with its probability if s.Probability. After this the party may go offline: the servers verify
// it between themselves and answer every query alone.
func (p *Party) UploadVerifiedKeys(ctx context.Context, s Servers) error {
	r, err := p.VerifiedKeys(s.Probability, nil)
	if err != nil {
		return err
	}
	return Upload(ctx, s, r)
}

// Report is a party's verified report as it is uploaded: its report ID,
// the public share every server gets (none for the dcf backend) and each
// server's share, the leader's first.
type Report struct {
	ID     core.ID
	Public []byte
	Shares [2][]byte
}

// Upload sends a verified report r, as made, one share to each server
// under the report ID r.ID: what UploadVerified and UploadVerifiedKeys
// send, and what a malicious party sends for a report it altered.
func Upload(ctx context.Context, s Servers, r Report) error {
	p := &Party{report: r.ID}
	return p.upload(ctx, s, &protocol.Upload{Public: r.Public, Share: r.Shares[0]}, &protocol.Upload{Public: r.Public, Share: r.Shares[1]})
}

// fromVerify is the upload of an additive-backend report.
func fromVerify(r verify.Report) Report {
	return Report{ID: r.Nonce, Public: r.Public, Shares: r.Shares}
}

// fromVDCF is the upload of a verified DCF report.
func fromVDCF(r vdcf.Report) Report { return Report{ID: r.Nonce, Shares: r.Shares} }
