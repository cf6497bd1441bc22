package simulate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunExactWithoutNoise: at ε = 2^48 the private ECDF of every backend
// is the true one, and the report carries the documented JSON keys.
func TestRunExactWithoutNoise(t *testing.T) {
	for _, backend := range []string{"plain", "additive", "dcf"} {
		cfg := Config{Parties: 200, Backend: backend, Epsilon: 1 << 48, Mechanism: "tree", Bins: 16, Min: 0, Max: 1, Seed: 5}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		if len(r.ECDF.Private) != 16 || r.ECDF.True[15] != 1 || r.Error.MaxAbs != 0 {
			t.Errorf("%s: %d values, F(max) = %g, max error %g", backend, len(r.ECDF.Private), r.ECDF.True[15], r.Error.MaxAbs)
		}
		b, _ := json.Marshal(r)
		for _, key := range []string{`"n":200`, `"backend":"` + backend, `"thresholds"`, `"smoothed"`, `"bytes_per_party"`, `"bytes_per_server"`, `"rounds"`, `"seconds"`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("%s: JSON lacks %s", backend, key)
			}
		}
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	for _, cfg := range []Config{
		{Parties: 10, Backend: "dcf", Epsilon: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 0.5, Seed: 1}, // scores above max
		{Parties: 10, Backend: "carrier-pigeon", Epsilon: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
		{Parties: 0, Backend: "dcf", Epsilon: 1, Mechanism: "tree", Bins: 16, Min: 0, Max: 1},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}
