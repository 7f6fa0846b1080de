package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clustersync/clustersync/internal/proc"
)

// ownerFile, in a test state folder, holds the PID of the test binary that
// made it.
const ownerFile = "owner.pid"

// tempPrefix names the test state folders Start makes in the temporary
// folder.
const tempPrefix = "clustersync-test-"

// claimDir records this test binary as the owner of state folder dir.
func claimDir(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// stopOrphans stops the processes that an earlier test binary started from
// a test state folder of the temporary folder and could not stop itself
// (it crashed: a fatal error or a SIGKILL skips TestMain's cleanup), so a
// machine running the tests again, CI's or the next session's, starts
// clean. A process is an orphan when its program lies below such a folder
// whose owner (ownerFile) is not alive, or that is gone; a live test
// binary's processes, e.g. of the other package `go test -p 2` runs, are
// left alone. The folders stay (their logs may be wanted). Each process
// gets SIGTERM, then SIGKILL after grace.
func stopOrphans(ctx context.Context, grace time.Duration) {
	prefix := filepath.Join(os.TempDir(), tempPrefix)
	pids, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return
	}
	for _, p := range pids {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		exe, _, _ := strings.Cut(string(cmdline), "\x00")
		rest, ok := strings.CutPrefix(exe, prefix)
		if !ok {
			continue
		}
		dir, _, _ := strings.Cut(rest, string(filepath.Separator))
		if ownerAlive(prefix + dir) {
			continue
		}
		_ = proc.StopPID(ctx, filepath.Base(exe), pid, grace)
	}
}

// ownerAlive reports whether the test binary that owns state folder dir
// still runs.
func ownerAlive(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return err == nil && proc.Alive(pid)
}
