package party

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/vdcf"
	"github.com/fedecdf/fedecdf/internal/verify"
)

func TestNewValidates(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	for _, tc := range []struct {
		inst Instance
		want string
	}{
		{Instance{Score: math.NaN()}, "NaN"},
		{Instance{Score: 1.5}, "1.5"},
		{Instance{Score: 0.5, Label: 2}, "label 2"},
		{Instance{Score: 0.5, Probability: -0.1, HasProbability: true}, "probability -0.1"},
		{Instance{Score: 0.5, Probability: math.NaN(), HasProbability: true}, "probability NaN"},
	} {
		if _, err := New(tc.inst, g); !errors.Is(err, ErrInvalidInstance) || !strings.HasPrefix(err.Error(), "party: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.inst, err, tc.want)
		}
	}
}

func TestPayload(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	p, err := New(Instance{Score: 0.35, Label: 0, Probability: 0.25, HasProbability: true}, g)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := New(Instance{Score: 0.35}, g)
	if p.ReportID() == q.ReportID() || p.ReportID().IsZero() {
		t.Error("report IDs are not fresh")
	}
	if p.Bin() != 4 {
		t.Fatalf("bin %d, want 4", p.Bin())
	}
	want := map[payload.Component]uint64{payload.Count: 1, payload.Label: 0, payload.NotLabel: 1, payload.Probability: 1 << 30}
	for c, v := range want {
		if p.Payload(c) != v {
			t.Errorf("%v payload %d, want %d", c, p.Payload(c), v)
		}
	}
}

// TestVerifiedReport: the report is the party's (bin, label) under its
// report ID: both servers accept it, and the revealed prefixes are its
// kernel.
func TestVerifiedReport(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	p, err := New(Instance{Score: 0.35, Label: 1}, g)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.VerifiedReport(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != p.ReportID() {
		t.Fatalf("report ID %v is not the party's %v", r.ID, p.ReportID())
	}
	s, _ := verify.New(10)
	var key [verify.KeySize]byte
	key[0] = 1
	leader, _ := s.NewServer(0, key)
	helper, _ := s.NewServer(1, key)
	outs, err := verify.VerifyPair(leader, helper, verify.Report{Nonce: r.ID, Public: r.Public, Shares: r.Shares})
	if err != nil {
		t.Fatal(err)
	}
	var prefixes [2]verify.Prefixes
	for i := range outs {
		agg := s.NewAggregate()
		if err := agg.Add(r.ID, outs[i]); err != nil {
			t.Fatal(err)
		}
		if prefixes[i], err = agg.Prefixes(); err != nil {
			t.Fatal(err)
		}
	}
	label, err := verify.Reveal(prefixes[0].Label, prefixes[1].Label)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{0, 0, 0, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(label, want) {
		t.Errorf("label prefixes %v, want %v (bin 4, label 1)", label, want)
	}
}

// TestVerifiedKeys: the verified DCF report is the party's (bin, label,
// and probability where the dataset collects it) under its report ID:
// both servers accept it, and the revealed count, label and probability
// prefixes are its kernel.
func TestVerifiedKeys(t *testing.T) {
	g, _ := ecdf.NewLinearGrid(0, 1, 10)
	for _, prob := range []bool{false, true} {
		for _, label := range []int{0, 1} {
			t.Run(fmt.Sprintf("label %d probability %v", label, prob), func(t *testing.T) {
				p, err := New(Instance{Score: 0.35, Label: label, Probability: 0.25, HasProbability: true}, g)
				if err != nil {
					t.Fatal(err)
				}
				r, err := p.VerifiedKeys(prob, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.ID != p.ReportID() {
					t.Fatalf("report ID %v is not the party's %v", r.ID, p.ReportID())
				}
				s, _ := vdcf.New(10)
				want := map[int]uint64{int(payload.Count): 1, int(payload.Label): uint64(label)}
				if prob {
					s, _ = vdcf.NewWithProbability(10)
					want[vdcf.Probability] = payload.ProbabilityScale / 4
				}
				key := [vdcf.KeySize]byte{1}
				leader, _ := s.NewServer(0, key)
				helper, _ := s.NewServer(1, key)
				vecs, err := vdcf.VerifyPair(leader, helper, vdcf.Report{Nonce: r.ID, Shares: r.Shares})
				if err != nil {
					t.Fatal(err)
				}
				if len(want) != len(s.Summed()) {
					t.Fatalf("components %v summed, want %v", s.Summed(), want)
				}
				for k, c := range s.Summed() {
					for j := range 10 {
						w := want[int(c)]
						if j < 3 {
							w = 0
						}
						if got := uint64(vecs[0][k*10+j].Add(vecs[1][k*10+j])); got != w {
							t.Errorf("prefix %d, component %d: %d, want %d", j, c, got, w)
						}
					}
				}
			})
		}
	}
}
