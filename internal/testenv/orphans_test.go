package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/proc"
)

// startCopy starts a copy of sleep from a test state folder (with owner
// pid, or none when 0) and returns it.
func startCopy(t *testing.T, owner int) *exec.Cmd {
	t.Helper()
	dir, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if owner != 0 {
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on PATH")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "bin", "sleep")
	if err := os.MkdirAll(filepath.Dir(exe), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Reaped at once, so that a stopped copy is gone, not a zombie.
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

// A process left by a dead test binary (no owner, or an owner that is
// gone) is stopped; one of a live test binary is not.
func TestStopOrphans(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true on PATH")
	}
	orphan := startCopy(t, 0)
	ownerGone := startCopy(t, dead.Process.Pid)
	owned := startCopy(t, os.Getpid())

	stopOrphans(context.Background(), 5*time.Second)

	deadline := time.Now().Add(10 * time.Second)
	for (proc.Alive(orphan.Process.Pid) || proc.Alive(ownerGone.Process.Pid)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if proc.Alive(orphan.Process.Pid) {
		t.Error("a process of a folder without owner still runs")
	}
	if proc.Alive(ownerGone.Process.Pid) {
		t.Error("a process of a folder whose owner is gone still runs")
	}
	if !proc.Alive(owned.Process.Pid) {
		t.Error("a live test binary's process was stopped")
	}
}
