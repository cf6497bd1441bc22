package simulate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fedecdf/fedecdf/ecdf/smooth"
)

// smoothingNames describes each smoothing method of smooth.Apply in the
// report.
var smoothingNames = map[string]string{
	"none":    "none (raw private curve)",
	"l1":      "dp-ecdf Eq. 3, p = 1, pointwise (isotonic L1 + clip to [0,1])",
	"l2":      "dp-ecdf Eq. 3, p = 2, pointwise (PAVA + clip to [0,1])",
	"tree-l2": "dp-ecdf Eq. 3, p = 2, over the mechanism's noise nodes (GLS projection)",
}

// checkSmoothing validates cfg.Smoothing, defaulting it to l2. tree-l2
// reads the noise pattern of all N prefixes, so it needs all of them.
func checkSmoothing(cfg *Config) error {
	if cfg.Smoothing == "" {
		cfg.Smoothing = "l2"
	}
	if !slices.Contains(smooth.Methods, cfg.Smoothing) {
		return fmt.Errorf("smoothing %q is unknown (valid: %s)", cfg.Smoothing, strings.Join(smooth.Methods, ", "))
	}
	if cfg.Smoothing == "tree-l2" && cfg.Prefixes > 0 && cfg.Prefixes < cfg.Bins {
		return fmt.Errorf("smoothing tree-l2 follows the noise of every prefix: query all %d (prefixes 0), not %d", cfg.Bins, cfg.Prefixes)
	}
	return nil
}
