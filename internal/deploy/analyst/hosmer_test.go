package analyst

import (
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/aggregation"
	"github.com/fedecdf/fedecdf/internal/payload"
)

// Releases over different report sets (a party uploaded between the
// paper plan's two releases) cannot be grouped together.
func TestHosmerSameReports(t *testing.T) {
	a, b := &aggregation.Release{ID: payload.ReleaseID{1}, Reports: 100}, &aggregation.Release{ID: payload.ReleaseID{2}, Reports: 100}
	if err := sameReports([]*aggregation.Release{a, b}); err != nil {
		t.Fatal(err)
	}
	b.Reports = 101
	if err := sameReports([]*aggregation.Release{a, b}); err == nil || !strings.Contains(err.Error(), "one non-empty report set") {
		t.Fatalf("100 and 101 reports: %v", err)
	}
	a.Reports, b.Reports = 0, 0
	if err := sameReports([]*aggregation.Release{a, b}); err == nil {
		t.Fatal("releases of no reports accepted")
	}
}

// TestBootstrapSeed pins bootstrapSeed (SHA-256 of "fedecdf hosmer
// bootstrap v1\x00l2\x0010\x00" and the ID 01 02 03 00…, computed
// independently with Python's hashlib) and checks that each input
// changes it.
func TestBootstrapSeed(t *testing.T) {
	rels := []*aggregation.Release{{ID: payload.ReleaseID{1, 2, 3}}}
	if got, want := bootstrapSeed(rels, "l2", 10), uint64(0x290469a01f1c4265); got != want {
		t.Errorf("bootstrapSeed = %#x, want %#x", got, want)
	}
	base := bootstrapSeed(rels, "l2", 10)
	for _, tc := range []struct {
		name   string
		rels   []*aggregation.Release
		method string
		groups int
	}{
		{"release", []*aggregation.Release{{ID: payload.ReleaseID{1, 2, 4}}}, "l2", 10},
		{"method", rels, "l1", 10},
		{"groups", rels, "l2", 11},
		{"second release", append(rels, &aggregation.Release{ID: payload.ReleaseID{9}}), "l2", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bootstrapSeed(tc.rels, tc.method, tc.groups) == base {
				t.Errorf("changing the %s leaves the seed %#x", tc.name, base)
			}
		})
	}
}
