package main

import "syscall"

// childAttr makes a child process receive SIGTERM when the process that
// started it dies, however it dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
