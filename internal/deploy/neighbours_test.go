package deploy

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
)

// TestAnalystNormalisesByNoisyTotalUnderAddRemove: an analyst of an
// add/remove deployment is not told n, so its ECDF is normalised by the
// noisy total — the released count at the last threshold — and its ROC
// result states the noisy total of the pair; every result says whether n
// is public, as JSON n_public and in its text. Under replace-one n is the
// number of reports, public, and the curves are as before.
func TestAnalystNormalisesByNoisyTotalUnderAddRemove(t *testing.T) {
	const n = 60
	for _, c := range []struct {
		relation, neighbours string
		public               bool
	}{{"addremove", "addremove", false}, {"replace", "replace", true}} {
		t.Run(c.relation, func(t *testing.T) {
			d := newDeploymentOf(t, 64, n, manifest.UploadDirect, c.relation) // ε large enough that no class total goes negative
			p := d.newParty()
			for _, x := range instances(n, 4) {
				if _, err := p.Submit(context.Background(), x); err != nil {
					t.Fatal(err)
				}
			}
			e := d.query()
			wantN := int64(n)
			if !c.public {
				wantN = max(e.Counts[bins-1], 1)
			}
			if e.N != wantN || e.Public != c.public || e.Neighbours != c.neighbours {
				t.Errorf("ECDF normaliser %+v under %s neighbours, want n = %d, public %v, %s", e.Normaliser, e.Neighbours, wantN, c.public, c.neighbours)
			}
			for i, v := range e.Counts {
				if e.Raw[i] != float64(v)/float64(wantN) {
					t.Fatalf("F̂ at bin %d is %v, want %d/%d", i+1, e.Raw[i], v, wantN)
				}
			}
			if want := math.Sqrt(servers*e.Noise().MeanVariance()) / float64(wantN); math.Abs(e.StdDev-want) > 1e-9*want {
				t.Errorf("s.d. of F̂ %v, want √(2·mean variance)/n = %v", e.StdDev, want)
			}
			b, _ := json.Marshal(e)
			for _, key := range []string{`"n":`, `"n_public":` + map[bool]string{true: "true", false: "false"}[c.public], `"neighbours":"` + c.neighbours + `"`} {
				if !strings.Contains(string(b), key) {
					t.Errorf("ECDF JSON lacks %s: %s", key, b)
				}
			}
			r := d.rocOf("l2")
			if r.Public != c.public || r.Neighbours != c.neighbours || (c.public && r.N != n) {
				t.Errorf("ROC normaliser %+v under %s neighbours, want public %v (n = %d when public)", r.Normaliser, r.Neighbours, c.public, n)
			}
		})
	}
}
