package client

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// SubmitForgeries has k malicious parties upload one invalid report each
// to the dataset of m, in the manifest's upload mode, each a party of
// its own (NewParty: the sealed transport, or a libp2p host): the kinds
// of the backend's forgeries (verify.Forgeries for additive,
// vdcf.Scheme.Forgeries for dcf) in turn,
// taken by rejection reason in turn (so that three parties already draw
// three reasons), each altered from a random record (rng seeded by seed).
// It is what fedecdf demo --malicious runs; both servers reject every one
// (a malformed or mismatched share at upload, the others at
// verification) and count it per reason. A refusal at upload as
// malformed or mismatched is expected; any other failure is returned,
// naming the party and its kind.
func SubmitForgeries(ctx context.Context, m *manifest.Manifest, k int, tc p2p.Config, seed uint64) error {
	kinds, err := ForgeriesOf(m)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d616c))
	kinds = assorted(kinds)
	for j := range k {
		kind := kinds[j%len(kinds)]
		if err := submitForgery(ctx, m, kind, tc, rng); err != nil {
			return fmt.Errorf("malicious party %d (%s): %w", j+1, kind.Name, err)
		}
	}
	return nil
}

// ForgeryKind is a kind of forgery of a backend: its name, the reason
// both servers reject it for, and how to make one under a report ID.
type ForgeryKind struct {
	Name   string
	Reason string
	forge  func(id payload.ReportID, rng *rand.Rand) (public []byte, shares [2][]byte, err error)
}

// ForgeriesOf lists the forgeries of m's backend: verify.Forgeries for
// additive, vdcf.Scheme.Forgeries of the scheme with the probability (a
// dcf manifest collects it) for dcf.
func ForgeriesOf(m *manifest.Manifest) ([]ForgeryKind, error) {
	bins := m.Grid.Bins
	if m.Backend == string(server.Additive) {
		s, err := verify.New(bins)
		if err != nil {
			return nil, err
		}
		return kindsOf(verify.Forgeries(), func(k verify.Forgery, id payload.ReportID, rng *rand.Rand) ([]byte, [2][]byte, error) {
			r, err := s.Forge(k, id, rng.IntN(bins), rng.IntN(2) == 1, crand.Reader, rng)
			return r.Public, r.Shares, err
		}), nil
	}
	s, err := vdcf.NewWithProbability(bins)
	if err != nil {
		return nil, err
	}
	return kindsOf(s.Forgeries(), func(k vdcf.Forgery, id payload.ReportID, rng *rand.Rand) ([]byte, [2][]byte, error) {
		r, err := s.Forge(k, id, rng.IntN(bins), rng.IntN(2) == 1, crand.Reader, rng)
		return nil, r.Shares, err
	}), nil
}

// kindsOf binds each kind of a scheme's forgeries to its forge function.
func kindsOf[K any](kinds []verify.Kind[K], forge func(K, payload.ReportID, *rand.Rand) ([]byte, [2][]byte, error)) []ForgeryKind {
	out := make([]ForgeryKind, len(kinds))
	for i, k := range kinds {
		out[i] = ForgeryKind{Name: k.Name, Reason: verify.Reason(k.Want), forge: func(id payload.ReportID, rng *rand.Rand) ([]byte, [2][]byte, error) {
			return forge(k.Kind, id, rng)
		}}
	}
	return out
}

// submitForgery uploads one invalid report of kind from a fresh party.
func submitForgery(ctx context.Context, m *manifest.Manifest, kind ForgeryKind, tc p2p.Config, rng *rand.Rand) error {
	id, err := payload.NewID()
	if err != nil {
		return err
	}
	public, shares, err := kind.forge(id, rng)
	if err != nil {
		return err
	}
	p, err := NewParty(m, nil, tc)
	if err != nil {
		return err
	}
	defer p.Close()
	if _, err := p.Send(ctx, p.verifiedReport(id, public, shares)); err != nil && !errors.Is(err, verify.ErrMalformed) && !errors.Is(err, verify.ErrMismatch) {
		return err
	}
	return nil
}

// assorted orders kinds one rejection reason at a time: the first kind of
// each reason, then the second of each, and so on.
func assorted(kinds []ForgeryKind) []ForgeryKind {
	var reasons []string
	byReason := map[string][]ForgeryKind{}
	for _, k := range kinds {
		if byReason[k.Reason] == nil {
			reasons = append(reasons, k.Reason)
		}
		byReason[k.Reason] = append(byReason[k.Reason], k)
	}
	var out []ForgeryKind
	for round := 0; len(out) < len(kinds); round++ {
		for _, r := range reasons {
			if round < len(byReason[r]) {
				out = append(out, byReason[r][round])
			}
		}
	}
	return out
}
