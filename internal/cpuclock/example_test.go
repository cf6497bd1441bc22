package cpuclock_test

import (
	"fmt"

	"github.com/fedecdf/fedecdf/internal/cpuclock"
)

func ExampleProcess() {
	start := cpuclock.Process()
	// … the work to time …
	fmt.Println(cpuclock.Process() >= start)
	// Output: true
}
