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
