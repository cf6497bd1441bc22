package server

// Dataset and upload: a party's report arrives (upload), is parsed and
// checked against its dataset (parseReport, checkPrefixes) and held until
// both servers have verified it (verified.go).

import (
	"fmt"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/errcode"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/transport"
)

// ErrTooManyReports is wrapped by the refusal of an upload to a dataset
// that holds its Dataset.MaxReports reports.
var ErrTooManyReports = errcode.New(errcode.TooManyReports, "too many reports")

// upload accepts a report; a duplicate report ID is dropped. A DCF
// report is folded; an additive one is held for verification (Verify),
// or rejected at once as malformed if its shares do not decode.
func (s *Server) upload(from transport.PeerID, m *protocol.Upload) (protocol.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.dataset(m.Dataset)
	if err != nil {
		return nil, err
	}
	key, err := s.parseReport(d, m)
	if err != nil {
		return nil, fmt.Errorf("%s: report %v rejected: %w", s.cfg.Role, m.Report, err)
	}
	if _, dup := d.reports[m.Report]; dup {
		return &protocol.Ack{Duplicate: true}, nil
	}
	if held := len(d.reports) + d.undecided(); held >= d.MaxReports {
		return nil, fmt.Errorf("%s: report %v refused: %w: dataset %q holds its maximum of %d reports; configure another dataset for more", s.cfg.Role, m.Report, ErrTooManyReports, d.Name, d.MaxReports)
	}
	if d.verified != nil {
		dup, err := d.verified.hold(s.cfg.Role, m)
		if err != nil {
			return nil, fmt.Errorf("%s: report %v rejected: %w", s.cfg.Role, m.Report, err)
		}
		return &protocol.Ack{Duplicate: dup}, nil
	}
	if err := d.fold.add(key); err != nil {
		return nil, fmt.Errorf("%s: report %v not folded: %w", s.cfg.Role, m.Report, err)
	}
	if k, ok := s.cfg.Reports.(keeper); ok {
		k.keep(m)
	}
	d.reports[m.Report] = uploadDigest(m)
	return &protocol.Ack{}, nil
}

// undecided is the number of verified reports held for verification
// (the helper's tentative reports are among its held uploads).
func (d *dataset) undecided() int {
	if d.verified == nil {
		return 0
	}
	return len(d.verified.uploads)
}

// parseReport checks the body of an upload against the dataset.
func (s *Server) parseReport(d *dataset, m *protocol.Upload) (*fss.Key, error) {
	return parseUpload(s.cfg.Role, d.Dataset, d.verified != nil, m)
}

// parseUpload checks the body of an upload against the dataset d (its
// reports verified or not) at the server of role.
func parseUpload(role Role, d Dataset, verified bool, m *protocol.Upload) (*fss.Key, error) {
	switch {
	case d.Backend == Additive && (len(m.Key) != 0 || len(m.Share) == 0):
		return nil, fmt.Errorf("dataset %q uses the additive backend: the upload must carry a verified report (public and input share, party.UploadVerified), not a DCF key", d.Name)
	case verified && d.Backend == DCF && (len(m.Key)+len(m.Public) != 0 || len(m.Share) == 0):
		return nil, fmt.Errorf("dataset %q uses the verified dcf backend: the upload must carry a verified DCF share (party.UploadVerifiedKeys), not a bare DCF key", d.Name)
	case verified:
		return nil, nil
	case len(m.Key) == 0:
		return nil, fmt.Errorf("missing DCF key (dataset %q uses the unverified dcf backend: party.UploadKeys)", d.Name)
	}
	key, err := fss.Decode(m.Key)
	if err != nil {
		return nil, fmt.Errorf("malformed DCF key: %w", err)
	}
	wantParty := int(role)
	switch {
	case key.Bits() != dcfBits(d.Bins):
		return nil, fmt.Errorf("malformed DCF key: %d input bits, want %d for %d bins", key.Bits(), dcfBits(d.Bins), d.Bins)
	case key.Components() != payload.NumComponents:
		return nil, fmt.Errorf("malformed DCF key: %d payload components, want %d", key.Components(), payload.NumComponents)
	case key.Party() != wantParty:
		return nil, fmt.Errorf("DCF key is party %d's, but the %s holds party %d's", key.Party(), role, wantParty)
	}
	return key, nil
}

func checkPrefixes(prefixes []int, bins int) error {
	if len(prefixes) == 0 {
		return fmt.Errorf("no prefixes")
	}
	if last := prefixes[len(prefixes)-1]; last > bins {
		return fmt.Errorf("prefix %d is beyond the %d bins", last, bins)
	}
	return nil
}
