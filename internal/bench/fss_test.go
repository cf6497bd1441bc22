package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fedecdf/fedecdf/fss"
)

func TestMeasureReportsConsistentFigures(t *testing.T) {
	cfg := FSSConfig{Bits: 6, Components: 3, Keys: 9, Points: []int{4, 64}, MinTime: 1}
	rep, err := MeasureFSS(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KeyBytes != fss.EncodedSize(6, 3) || rep.KeyBytes > rep.KeyBytesBCG21+4 /* key header */ {
		t.Errorf("key bytes %d, BCG+21 %d", rep.KeyBytes, rep.KeyBytesBCG21)
	}
	if rep.EvalAESBlocks != 6*(1+2)+2 {
		t.Errorf("Eval AES blocks %d, want n(1+⌈m/2⌉)+⌈m/2⌉ = 20", rep.EvalAESBlocks)
	}
	for i, b := range rep.Batches {
		nodes, blocks, _ := fss.BatchCost(6, 3, evenPoints(cfg.Points[i], 6))
		if b.Points != cfg.Points[i] || b.Nodes != nodes || b.AESBlocksPerKey != blocks {
			t.Errorf("batch %d: %+v, BatchCost says %d nodes, %d blocks", i, b, nodes, blocks)
		}
		if !(b.Ratio > 0) || !(b.NsPerKeyPoint > 0) {
			t.Errorf("batch %d: non-positive timing %+v", i, b)
		}
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !bytes.Contains(text.Bytes(), []byte("aes_ctr_ns_per_block")) {
		t.Errorf("text report: %v\n%s", err, text.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back FSSReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.KeyBytes != rep.KeyBytes || len(back.Batches) != 2 {
		t.Errorf("JSON report does not round-trip: %v", err)
	}
	if _, err := MeasureFSS(FSSConfig{Bits: 6, Components: 3, Keys: 1, Points: []int{65}, MinTime: 1}); err == nil {
		t.Error("batch larger than the domain accepted")
	}
}

func TestEvenPoints(t *testing.T) {
	for _, tc := range []struct{ count, n int }{{1, 1}, {4, 4}, {16, 4}, {64, 16}, {5, 64}} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			points := evenPoints(tc.count, tc.n)
			for j, x := range points {
				if j > 0 && x <= points[j-1] || tc.n < 64 && x >= 1<<uint(tc.n) {
					t.Errorf("%+v: point %d = %d out of order or out of the domain", tc, j, x)
				}
			}
		})
	}
	if p := evenPoints(4, 64); p[1] != 1<<62 || p[3] != 3<<62 {
		t.Errorf("evenPoints(4, 64) = %x", p)
	}
}
