package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
	"github.com/fedecdf/fedecdf/internal/payload"
	"github.com/fedecdf/fedecdf/internal/vdcf"
)

func TestMeasureVerifyConsistentFigures(t *testing.T) {
	for _, prob := range []bool{false, true} {
		t.Run(fmt.Sprint("probability ", prob), func(t *testing.T) { measureVerifyConsistent(t, prob) })
	}
}

func measureVerifyConsistent(t *testing.T, prob bool) {
	rep, err := MeasureVerify(VerifyConfig{Bins: 16, Reports: 5, MinTime: 1, Probability: prob})
	if err != nil {
		t.Fatal(err)
	}
	scheme, _ := vdcf.New(16)
	if prob {
		scheme, _ = vdcf.NewWithProbability(16)
	}
	if want := [2]int{scheme.ShareSize(0), scheme.ShareSize(1)}; rep.UploadBytes != fss.EncodedSize(5, payload.NumComponents) || rep.VerifiedBytes != want {
		t.Errorf("upload %d → %v bytes, want %d → %v", rep.UploadBytes, rep.VerifiedBytes, fss.EncodedSize(5, payload.NumComponents), want)
	}
	if rep.ExchangeBytes != scheme.Message1Size()+vdcf.Message2Size || !rep.AcceptedAllHonest {
		t.Errorf("exchange %d bytes, all honest accepted %v", rep.ExchangeBytes, rep.AcceptedAllHonest)
	}
	if !(rep.EvalNs > 0 && rep.FieldEvalNs > 0 && rep.CheckNs > 0 && rep.VerifiedNs == rep.FieldEvalNs+rep.CheckNs+rep.FoldNs) {
		t.Errorf("timings %+v", rep)
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !bytes.Contains(text.Bytes(), []byte("server_cpu_ns_per_report")) {
		t.Errorf("text report: %v\n%s", err, text.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back VerifyReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back != rep {
		t.Errorf("JSON round trip: %v, %+v", err, back)
	}
	if _, err := MeasureVerify(VerifyConfig{Bins: 1, Reports: 5}); err == nil {
		t.Error("1 bin accepted")
	}
}
