package party

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"

	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// VerifiedReport returns the party's one-shot report for the additive
// backend (package internal/verify): its (bin, label) as a one-hot
// Prio3 histogram over class × bin, sharded for the two servers, with the
// report ID as the nonce; randomness from rand, crypto/rand when nil. The
// probability component is not carried.
func (p *Party) VerifiedReport(rand io.Reader) (verify.Report, error) {
	return p.VerifiedReportAt(p.report, rand)
}

// VerifiedReportAt is VerifiedReport under the report ID id instead of
// the party's own: a party that derives its IDs (a rerun of a file must
// send the same reports) gives them here.
func (p *Party) VerifiedReportAt(id payload.ReportID, rand io.Reader) (verify.Report, error) {
	s, err := verify.New(p.bins)
	if err != nil {
		return verify.Report{}, fmt.Errorf("party: %w", err)
	}
	if rand == nil {
		rand = crand.Reader
	}
	r, err := s.EncodeAt(id, p.bin-1, p.payload[1] == 1, rand)
	if err != nil {
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
	return UploadReport(ctx, s, r)
}

// UploadReport sends a verified report r, as made, one input share to
// each server under the report ID r.Nonce: what UploadVerified sends, and
// what a malicious party sends for a report it altered.
func UploadReport(ctx context.Context, s Servers, r verify.Report) error {
	p := &Party{report: r.Nonce}
	return p.upload(ctx, s, &protocol.Upload{Public: r.Public, Share: r.Shares[0]}, &protocol.Upload{Public: r.Public, Share: r.Shares[1]})
}
