//go:build !linux

package main

import "syscall"

// childAttr is nil outside Linux, which has no parent-death signal: the
// demo stops its children on SIGINT and SIGTERM and on return, but not
// when it is killed with SIGKILL.
func childAttr() *syscall.SysProcAttr { return nil }
