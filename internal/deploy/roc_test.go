package deploy

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/internal/deploy/analyst"
	"github.com/fedecdf/fedecdf/internal/deploy/manifest"
	"github.com/fedecdf/fedecdf/party"
	"github.com/fedecdf/fedecdf/roc"
)

// rocOf queries the deployment's ROC curve, smoothed by method.
func (d *deployment) rocOf(method string) *analyst.ROC {
	d.t.Helper()
	a, err := analyst.NewAnalyst(d.m, d.analystID, fast)
	if err != nil {
		d.t.Fatal(err)
	}
	defer a.Close()
	r, err := a.ROC(context.Background(), method)
	if err != nil {
		d.t.Fatalf("analyst ROC query: %v", err)
	}
	return r
}

// exactROC is the in-process reference curve of the instances on the
// manifest's grid.
func exactROC(t *testing.T, d *deployment, inst []party.Instance) *roc.Curve {
	t.Helper()
	grid, err := d.m.NewGrid()
	if err != nil {
		t.Fatal(err)
	}
	bins, labels := make([]int, len(inst)), make([]int, len(inst))
	for k, x := range inst {
		if bins[k], err = grid.Bin(x.Score); err != nil {
			t.Fatal(err)
		}
		labels[k] = x.Label
	}
	pos, neg, err := roc.ExactPrefixes(bins, labels, grid.Len())
	if err != nil {
		t.Fatal(err)
	}
	c, err := roc.FromPrefixes(pos, neg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// At a huge ε the ROC curve released over libp2p is the exact one; with
// real noise (ε = 20: with only 30 positives among 100 reports, ε = 1 can
// release a negative number of positives, which roc refuses by design) it
// is monotone and in [0, 1] with an AUC in [0, 1].
func TestROCOverTheNetwork(t *testing.T) {
	for _, eps := range []float64{hugeEpsilon, 20} {
		const n = 100
		d := newDeployment(t, eps, n)
		p := d.newParty()
		inst := instances(n, 3)
		for _, x := range inst {
			if _, err := p.Submit(context.Background(), x); err != nil {
				t.Fatal(err)
			}
		}
		got := d.rocOf("l2")
		if eps == hugeEpsilon {
			want := exactROC(t, d, inst)
			if math.Abs(got.AUC-want.AUC()) > 1e-12 || !slices.Equal(got.TPR, want.TPR) || !slices.Equal(got.FPR, want.FPR) {
				t.Fatalf("ROC at huge ε: AUC %v, exact %v", got.AUC, want.AUC())
			}
			continue
		}
		if got.N != n || !(got.AUC >= 0 && got.AUC <= 1) {
			t.Fatalf("ROC at ε = 20: n = %d, AUC %v", got.N, got.AUC)
		}
		for i := 1; i < len(got.TPR); i++ {
			if got.TPR[i] > got.TPR[i-1] || got.FPR[i] > got.FPR[i-1] || got.TPR[i] < 0 || got.FPR[i] < 0 {
				t.Fatalf("ROC at ε = 20 is not monotone in [0, 1] at %d", i)
			}
		}
	}
}

// A manifest whose mechanism is auto and whose policy allows partitioned
// gets the partitioned ROC release where analysis.ROCParams chooses it
// (64 bins at ε = 20), through both servers' policy checks; a policy that
// allows auto alone keeps auto's mechanism.
func TestROCPartitionedWhereAllowed(t *testing.T) {
	for _, c := range []struct {
		allowed []string
		want    string
	}{{[]string{"auto", analysis.ROCMechanism}, "partitioned("}, {[]string{"auto"}, "kary("}} {
		t.Run(strings.Join(c.allowed, ","), func(t *testing.T) {
			const n = 100
			d := newDeploymentMech(t, manifest.Mech{Name: "auto", Epsilon: 20, Neighbours: "replace", Allowed: c.allowed}, n, manifest.UploadDirect, nil)
			p := d.newParty()
			for _, x := range instances(n, 5) {
				if _, err := p.Submit(context.Background(), x); err != nil {
					t.Fatal(err)
				}
			}
			if got := d.rocOf("l2"); !strings.HasPrefix(got.Mechanism, c.want) {
				t.Errorf("ROC released by %s, want %s…", got.Mechanism, c.want)
			}
		})
	}
}
