package proc

import "syscall"

// childAttr puts a child in its own process group and has Linux kill it
// (SIGKILL) when the thread that started it dies (Start).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
