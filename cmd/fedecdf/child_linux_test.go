package main

import (
	"context"
	"syscall"
	"testing"
)

// TestDemoChildDiesWithParent: on Linux the demo's server processes get
// SIGTERM from the kernel when the demo dies, even by SIGKILL.
func TestDemoChildDiesWithParent(t *testing.T) {
	p := demoChild(context.Background(), "fedecdf", "server")
	if p.SysProcAttr == nil || p.SysProcAttr.Pdeathsig != syscall.SIGTERM {
		t.Fatalf("SysProcAttr %+v: want Pdeathsig SIGTERM", p.SysProcAttr)
	}
}
