package deploy

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fedecdf/fedecdf/internal/p2p"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/verify"
	"github.com/fedecdf/fedecdf/server"
)

// ErrNotAdditive is wrapped by the refusal of SubmitForgeries for a
// manifest whose dataset does not run the additive backend.
var ErrNotAdditive = errors.New("the manifest's backend is not additive")

// SubmitForgeries has k malicious parties upload one invalid report each
// to the additive dataset of m, in the manifest's upload mode, each from
// a libp2p host of its own: the kinds of verify.Forgeries in turn, taken
// by rejection reason in turn (so that three parties already draw three
// reasons), each altered from a random record (rng seeded by seed). It is what fedecdf
// demo --malicious runs; both servers reject every one (a malformed share
// at upload, the others at verification) and count it per reason. A
// refusal at upload as malformed is expected; any other failure is
// returned, naming the party and its kind.
func SubmitForgeries(ctx context.Context, m *Manifest, k int, tc p2p.Config, seed uint64) error {
	if k > 0 && m.Backend != string(server.Additive) {
		return fmt.Errorf("%d malicious parties: %w (%q): only the additive backend verifies reports over the network", k, ErrNotAdditive, m.Backend)
	}
	scheme, err := verify.New(m.Grid.Bins)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d616c))
	kinds := assorted()
	for j := range k {
		kind := kinds[j%len(kinds)]
		if err := submitForgery(ctx, m, scheme, kind.Kind, tc, rng); err != nil {
			return fmt.Errorf("malicious party %d (%s): %w", j+1, kind.Name, err)
		}
	}
	return nil
}

// submitForgery uploads one invalid report of kind from a fresh host.
func submitForgery(ctx context.Context, m *Manifest, scheme *verify.Scheme, kind verify.Forgery, tc p2p.Config, rng *rand.Rand) error {
	id, err := payload.NewID()
	if err != nil {
		return err
	}
	r, err := scheme.Forge(kind, id, rng.IntN(scheme.Bins()), rng.IntN(2) == 1, crand.Reader, rng)
	if err != nil {
		return err
	}
	p, err := NewParty(m, nil, tc)
	if err != nil {
		return err
	}
	defer p.Close()
	if _, err := p.Send(ctx, p.verifiedReport(r)); err != nil && !errors.Is(err, verify.ErrMalformed) {
		return err
	}
	return nil
}

// assorted lists verify.Forgeries one rejection reason at a time: the
// first kind of each reason, then the second of each, and so on.
func assorted() []forgeryKind {
	var reasons []string
	byReason := map[string][]forgeryKind{}
	for _, k := range verify.Forgeries() {
		r := verify.Reason(k.Want)
		if byReason[r] == nil {
			reasons = append(reasons, r)
		}
		byReason[r] = append(byReason[r], forgeryKind{k.Kind, k.Name})
	}
	var out []forgeryKind
	for round := 0; len(out) < len(verify.Forgeries()); round++ {
		for _, r := range reasons {
			if round < len(byReason[r]) {
				out = append(out, byReason[r][round])
			}
		}
	}
	return out
}

// forgeryKind is a kind of forgery and its name.
type forgeryKind struct {
	Kind verify.Forgery
	Name string
}
