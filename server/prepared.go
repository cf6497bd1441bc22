package server

// Verification spread over the processes of a role (package doc,
// "Preparation by other processes"): the preparation of verified DCF
// reports by any process (Preparer), and the coordinating Server's use
// of what they recorded (PreparationStore).

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/protocol"
	"github.com/fedecdf/fedecdf/internal/verify"
)

// PreparationStore holds what the processes of a role prepared of its
// verified DCF reports (Preparer): each report's sketch, and folds, the
// sums of the prepared reports' prefix vectors, each report in exactly
// one fold. With one (Config.Preparations), a Server verifies a report
// only once it is prepared, from its sketch, never evaluating its key,
// adds no output to an aggregate of its own, and sums a release from
// the folds.
type PreparationStore interface {
	// Sketches returns the sketch of each of ids of dataset that has
	// been prepared (none for one not yet prepared, or whose share did
	// not decode), and the SHA-256 of the upload it was prepared from
	// (the bytes the ReportStore's Uploads returned then, as Folds'): a
	// report is verified from its sketch only if the upload verified is
	// that one, so that the upload an acceptance keeps is the one whose
	// output is folded.
	Sketches(dataset string, ids []core.ID) (sketches map[core.ID][]byte, uploads map[core.ID][sha256.Size]byte, err error)
	// Folds returns, read at one instant, every fold of dataset
	// (Preparer.Prepare's) and the reports they hold, each with the
	// SHA-256 of its upload as it was folded (the bytes the
	// ReportStore's Uploads returned then): a report's output taken out
	// of the folds again is re-derived only from that upload.
	Folds(dataset string) (folds [][]byte, reports map[core.ID][sha256.Size]byte, err error)
	// PrepareNow has prepare prepare those of ids of dataset no process
	// prepared yet (prepare is Preparer.Prepare), waiting for those
	// another process is preparing, and records them as the role's
	// processes do: the Server's own share of the work, for reports it
	// must verify now.
	PrepareNow(dataset string, ids []core.ID, prepare func(ids []core.ID, uploads [][]byte) (sketches [][]byte, fold []byte, err error)) error
}

// Preparer prepares the verified DCF reports of one dataset for one
// server role in any of its processes: it evaluates each report's key,
// sketches it (the costly part of its verification) and folds the
// prefix vectors, for the role's coordinating Server to verify from the
// sketches and sum releases from the folds. Safe for concurrent use.
type Preparer struct {
	v *verifiedDCF
}

// NewPreparer returns the Preparer of dataset d (verified DCF) at the
// server of role, with the servers' shared verification key.
func NewPreparer(d Dataset, role Role, key [verify.KeySize]byte) (*Preparer, error) {
	if d.Backend != DCF || d.Unverified {
		return nil, fmt.Errorf("%s: dataset %q: only verified dcf reports are prepared by other processes", role, d.Name)
	}
	v, err := newVDCF(d.Bins, d.Probability, role, key)
	if err != nil {
		return nil, fmt.Errorf("%s: dataset %q: %w", role, d.Name, err)
	}
	return &Preparer{v: v}, nil
}

// Prepare prepares the reports ids from their encoded uploads (as
// stored): per report its sketch (nil: the upload or its share does not
// decode, and nothing of it is folded), and the fold of the others (nil
// if none).
func (p *Preparer) Prepare(ids []core.ID, uploads [][]byte) (sketches [][]byte, fold []byte, err error) {
	ups := make([]*protocol.Upload, 0, len(ids))
	at := make([]int, 0, len(ids))
	for i, b := range uploads {
		if up, err := storedUpload(ids[i], b); err == nil {
			ups, at = append(ups, up), append(at, i)
		}
	}
	agg, err := p.v.sch.NewAggregate(p.v.comp)
	if err != nil {
		return nil, nil, err
	}
	sketches = make([][]byte, len(ids))
	folded := 0
	for k, st := range p.v.prepare(ups) {
		if st.err != nil {
			continue
		}
		ds := st.state.(*dcfState)
		if err := agg.AddSummed(ds.vec); err != nil {
			return nil, nil, err
		}
		sketches[at[k]] = ds.p.Sketch()
		folded++
	}
	if folded > 0 {
		fold = agg.Encode()
	}
	return sketches, fold, nil
}

// prepared is a verified DCF dataset's link to the reports its role's
// processes prepared (Config.Preparations).
type prepared struct {
	store   PreparationStore
	dataset string
	dcf     *verifiedDCF
}

// sketches splits ups into those prepared, with their sketches, and the
// IDs of the others. An upload that is not the one its sketch was
// prepared from (preparedUpload) is an error wrapping ErrUploadChanged.
func (p *prepared) sketches(ups []*protocol.Upload) (ready []*protocol.Upload, sk [][]byte, unready []payload.ReportID, err error) {
	ids := make([]payload.ReportID, len(ups))
	for i, up := range ups {
		ids[i] = up.Report
	}
	got, digests, err := p.store.Sketches(p.dataset, ids)
	if err != nil {
		return nil, nil, nil, err
	}
	changed := make([]error, len(ups)) // each a hash of its encoding: on every core
	parallel(len(ups), func(i int) {
		if _, ok := got[ups[i].Report]; ok {
			changed[i] = p.preparedUpload(ups[i], digests)
		}
	})
	for i, up := range ups {
		s, ok := got[up.Report]
		switch {
		case !ok:
			unready = append(unready, up.Report)
		case changed[i] != nil:
			return nil, nil, nil, changed[i]
		default:
			ready, sk = append(ready, up), append(sk, s)
		}
	}
	return ready, sk, unready, nil
}

// preparedUpload checks that up, an upload about to be verified from its
// sketch, is the one its role's processes prepared and folded: the
// SHA-256 of its encoding (the stored bytes: an upload's encoding is
// canonical, protocol's FuzzDecode) against the digest they recorded.
// One that is not — the store edited or damaged between the preparation
// and the verification, the server holding one upload and the fold the
// output of another — is refused, with an error wrapping
// ErrUploadChanged naming the report (the caller names the dataset):
// verified, its acceptance would keep the digest of one upload while
// the release sums the output of the other.
func (p *prepared) preparedUpload(up *protocol.Upload, digests map[payload.ReportID][sha256.Size]byte) error {
	if want, ok := digests[up.Report]; ok && sha256.Sum256(protocol.Encode(up)) == want {
		return nil
	}
	return fmt.Errorf("report %v, prepared: %w: the upload to verify is not the one its role's processes prepared and folded (the store was edited or damaged since it was received or folded); it is not verified from its sketch: quarantine the report at both servers", up.Report, ErrUploadChanged)
}

// lead prepares ups at the leader from their sketches: if all, first
// preparing here those no process has prepared yet (PrepareNow), else
// leaving those out (added to unready). It returns the reports
// prepared and their steps.
func (p *prepared) lead(ups []*protocol.Upload, unready map[payload.ReportID]bool, all bool) ([]*protocol.Upload, []step, error) {
	ready, sketches, later, err := p.sketchesNow(ups, all)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range later {
		unready[id] = true
	}
	return ready, p.dcf.resketch(ready, sketches), nil
}

// sketchesNow is sketches, having first prepared here, if now, the
// reports no process prepared yet (PrepareNow); a report prepared
// without a sketch (its share does not decode) is among unready.
func (p *prepared) sketchesNow(ups []*protocol.Upload, now bool) (ready []*protocol.Upload, sk [][]byte, unready []payload.ReportID, err error) {
	ready, sk, unready, err = p.sketches(ups)
	if err != nil || !now || len(unready) == 0 {
		return ready, sk, unready, err
	}
	if err := p.store.PrepareNow(p.dataset, unready, (&Preparer{v: p.dcf}).Prepare); err != nil {
		return nil, nil, nil, err
	}
	rest := make([]*protocol.Upload, 0, len(unready))
	for _, up := range ups {
		if slices.Contains(unready, up.Report) {
			rest = append(rest, up)
		}
	}
	more, moreSk, unready, err := p.sketches(rest)
	return append(ready, more...), append(sk, moreSk...), unready, err
}

// resketch starts the verification of each of ups from its sketch
// (vdcf.Server.Resketch): per report, a *dcfState without its prefix
// vector (its output is in a fold) and the first message.
func (v *verifiedDCF) resketch(ups []*protocol.Upload, sketches [][]byte) []step {
	steps := make([]step, len(ups))
	parallel(len(ups), func(j int) {
		sh, err := v.srv.DecodeShare(ups[j].Share)
		if err != nil {
			steps[j].err = err
			return
		}
		p, msg, err := v.srv.Resketch(ups[j].Report, sh, sketches[j])
		steps[j] = step{&dcfState{p: p}, msg, err}
	})
	return steps
}

// followSketched is follow from the reports' sketches.
func (v *verifiedDCF) followSketched(ups []*protocol.Upload, leader, sketches [][]byte) []step {
	return exchanged(v.resketch(ups, sketches), leader)
}

// foldedSums sets the sums of rel, a release over every report accepted,
// from the folds read at one instant: their sum, less the outputs of the
// reports folded but not in rel (rejected, or not decided yet), plus
// those of the reports of rel not folded yet, each re-derived from its
// upload, checked against the digest of the upload folded
// (foldedReports.read) or accepted (heldReports.read). An error (an
// upload to re-derive no longer stored, say) leaves the caller to
// re-derive all of rel's; ErrUploadChanged is the caller's to refuse.
func (v *verified) foldedSums(dataset string, rel *release, reports ReportStore) error {
	folds, folded, err := v.prep.store.Folds(dataset)
	if err != nil {
		return err
	}
	total, err := v.scheme.fresh()
	if err != nil {
		return err
	}
	less, _ := v.scheme.fresh()
	for _, f := range folds {
		if err := total.(*dcfSum).agg.AddEncoded(f); err != nil {
			return fmt.Errorf("a fold of dataset %q: %w", dataset, err)
		}
	}
	in := make(map[payload.ReportID]bool, len(rel.reports))
	for _, id := range rel.reports {
		in[id] = true
	}
	var extra, lacking []payload.ReportID
	for id := range folded {
		if !in[id] {
			extra = append(extra, id)
		}
	}
	slices.SortFunc(extra, payload.CompareIDs)
	for _, id := range rel.reports {
		if _, ok := folded[id]; !ok {
			lacking = append(lacking, id)
		}
	}
	if len(extra)+len(lacking) > len(rel.reports) {
		return fmt.Errorf("%d reports to re-derive, more than the release's %d", len(extra)+len(lacking), len(rel.reports))
	}
	if err := v.rederiveInto(total, dataset, "re-deriving the release's reports no fold holds", lacking, reports, v.counted.read); err != nil {
		return err
	}
	if err := v.rederiveInto(less, dataset, "taking out of the folds the reports not in the release", extra, reports, foldedReports(folded).read); err != nil {
		return err
	}
	sum := total.(*dcfSum)
	sum.less = less.(*dcfSum).agg
	return sum.sums(rel)
}

// rederiveInto adds to agg the outputs of the reports ids of dataset,
// re-derived from their uploads, read back from reports and checked (by
// read: heldReports.read, foldedReports.read) for what.
func (v *verified) rederiveInto(agg aggregator, dataset, what string, ids []payload.ReportID, reports ReportStore, read readBack) error {
	for start := 0; start < len(ids); start += verifyBatch {
		chunk := ids[start:min(start+verifyBatch, len(ids))]
		ups := make([]*protocol.Upload, 0, len(chunk))
		err := read(reports, dataset, what, chunk, func(up *protocol.Upload) error {
			ups = append(ups, up)
			return nil
		})
		if err == nil && len(ups) != len(chunk) {
			err = fmt.Errorf("dataset %q: %s: %d of %d reports read back", dataset, what, len(ups), len(chunk))
		}
		if err != nil {
			return err
		}
		outs := make([]step, len(ups))
		parallel(len(ups), func(i int) {
			outs[i].state, outs[i].err = v.scheme.rederive(ups[i])
		})
		for i, o := range outs {
			if o.err == nil {
				o.err = agg.add(ups[i].Report, o.state)
			}
			if o.err != nil {
				return fmt.Errorf("dataset %q: %s: report %v: %w", dataset, what, ups[i].Report, o.err)
			}
		}
	}
	return nil
}
