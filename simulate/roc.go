package simulate

import (
	"github.com/fedecdf/fedecdf/analysis"
	"github.com/fedecdf/fedecdf/core"
	"github.com/fedecdf/fedecdf/party"
)

// trueROC is the parties' exact ROC curve at the queried prefixes.
func trueROC(parties []*party.Party, bins int, prefixes []int) (analysis.Curve, error) {
	b, labels := make([]int, len(parties)), make([]int, len(parties))
	for k, p := range parties {
		b[k], labels[k] = p.Bin(), int(p.Payload(core.Label))
	}
	return analysis.TrueROC(b, labels, bins, prefixes)
}
