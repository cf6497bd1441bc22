package party

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/ecdf"
	"github.com/fedecdf/fedecdf/internal/protocol"
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
		if _, err := New(tc.inst, g); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %q", tc.inst, err, tc.want)
		}
	}
}

func TestPayloadAndShares(t *testing.T) {
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
	want := map[protocol.Component]uint64{protocol.Count: 1, protocol.Label: 0, protocol.NotLabel: 1, protocol.Probability: 1 << 30}
	for c, v := range want {
		if p.Payload(c) != v {
			t.Errorf("%v payload %d, want %d", c, p.Payload(c), v)
		}
	}
	prefixes := []int{3, 4, 10}
	leader, helper, err := p.AdditiveShares(protocol.Probability, prefixes, bytes.NewReader(bytes.Repeat([]byte{0xab}, 24)))
	if err != nil {
		t.Fatal(err)
	}
	for j, k := range p.Kernel(protocol.Probability, prefixes) {
		if leader[j]+helper[j] != k {
			t.Errorf("prefix %d: shares add to %d, want %d", prefixes[j], leader[j]+helper[j], k)
		}
	}
	if _, _, err := p.AdditiveShares(protocol.Count, []int{11}, nil); err == nil {
		t.Error("prefix beyond the grid accepted")
	}
}
