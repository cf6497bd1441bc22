package server

import (
	"fmt"
	"sync"

	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// UploadChecker checks an upload as the server of one role checks it
// before holding it, without a Server's state: that it is an upload of
// the dataset, of the dataset's backend, and that its share decodes (a
// share that does not is rejected as malformed). A process that
// records uploads for another to verify (a standby process of a server
// on a shared database) refuses with it at once what the server would
// reject when it reads the upload. It does not know which reports the
// server holds or decided: a duplicate, or a report decided already,
// passes.
type UploadChecker struct {
	role     Role
	d        Dataset
	verified bool
	mu       sync.Mutex
	sch      scheme // nil for an unverified dcf dataset
}

// NewUploadChecker returns the checker of the uploads of dataset d at
// the server of role, whose verify key (Config.VerifyKey) is key; the
// key may be zero for an unverified dcf dataset.
func NewUploadChecker(d Dataset, role Role, key [verify.KeySize]byte) (*UploadChecker, error) {
	c := &UploadChecker{role: role, d: d, verified: !(d.Backend == DCF && d.Unverified)}
	if !c.verified {
		return c, nil
	}
	if key == ([verify.KeySize]byte{}) {
		return nil, fmt.Errorf("server: checking the uploads of the verified %s backend needs the servers' shared verification key", d.Backend)
	}
	var err error
	if d.Backend == Additive {
		c.sch, err = newAdditive(d.Bins, role, key)
	} else {
		c.sch, err = newVDCF(d.Bins, d.Probability, role, key)
	}
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return c, nil
}

// Check returns why the server would refuse the encoded upload at once
// (naming the report), or nil.
func (c *UploadChecker) Check(upload []byte) error {
	msg, err := protocol.Decode(upload)
	if err != nil {
		return fmt.Errorf("%s: malformed report: %w", c.role, err)
	}
	m, ok := msg.(*protocol.Upload)
	switch {
	case !ok:
		return fmt.Errorf("%s: %T is not a report", c.role, msg)
	case m.Dataset != c.d.Name:
		return fmt.Errorf("%s: report %v: %w %q", c.role, m.Report, ErrUnknownDataset, m.Dataset)
	}
	if _, err := parseUpload(c.role, c.d, c.verified, m); err != nil {
		return fmt.Errorf("%s: report %v rejected: %w", c.role, m.Report, err)
	}
	if c.sch == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.sch.check(m); err != nil {
		return fmt.Errorf("%s: report %v rejected: %w", c.role, m.Report, err)
	}
	return nil
}
