//go:build !linux

package proc

import "syscall"

// childAttr puts a child in its own process group. Outside Linux there is
// no parent-death signal: a child outlives a parent that dies without
// stopping it. The processes clustersync starts (the local host cluster
// of `dev up`, tests' API servers) run on Linux only; the CLI for macOS
// builds this so that its other commands work there.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
