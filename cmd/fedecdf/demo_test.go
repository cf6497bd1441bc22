package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// fedecdf demo end to end: two server processes (this test binary acting
// as fedecdf, see TestMain), 120 party hosts and an analyst on 127.0.0.1
// print the ECDF, the ROC AUC and the Hosmer–Lemeshow test, and stop.
func TestDemo(t *testing.T) {
	t.Setenv(asCommand, "1") // the server processes inherit it
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&out)
	if err := runDemo(ctx, cmd, t.TempDir(), demoOptions{parties: 120, bins: 32, epsilon: 1, upload: "direct"}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"120 parties uploaded", "quantile 0.5", "private AUC", "Hosmer–Lemeshow from the same release"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
