package party

import (
	"context"
	"fmt"
	"io"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/protocol"
)

// DCFKeys returns the two encoded keys of the distributed comparison
// function for the party's bin and whole payload vector (dp-ecdf §4.2):
// evaluated at the point of prefix i (fss.PrefixDomain), the two shares
// add up to payload·1[bin ≤ i] mod 2^64 componentwise. Key seeds come
// from rand, crypto/rand when nil.
func (p *Party) DCFKeys(rand io.Reader) (leader, helper []byte, err error) {
	dom, err := fss.NewPrefixDomain(p.bins)
	if err != nil {
		return nil, nil, fmt.Errorf("party: %w", err)
	}
	k0, k1, err := dom.Gen(p.bin-1, p.payload[:], rand)
	if err != nil {
		return nil, nil, fmt.Errorf("party: report %v: %w", p.report, err)
	}
	if leader, err = k0.MarshalBinary(); err != nil {
		return nil, nil, fmt.Errorf("party: %w", err)
	}
	if helper, err = k1.MarshalBinary(); err != nil {
		return nil, nil, fmt.Errorf("party: %w", err)
	}
	return leader, helper, nil
}

// UploadKeys sends the party's DCF keys, one to each server. After this
// the party may go offline: the servers answer every query alone.
func (p *Party) UploadKeys(ctx context.Context, s Servers) error {
	leader, helper, err := p.DCFKeys(nil)
	if err != nil {
		return err
	}
	return p.upload(ctx, s, &protocol.Upload{Key: leader}, &protocol.Upload{Key: helper})
}
