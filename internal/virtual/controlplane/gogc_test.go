package controlplane

import (
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

func TestSetDefaultGOGC(t *testing.T) {
	restore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(restore)

	t.Run("unset", func(t *testing.T) {
		t.Setenv("GOGC", "") // restored after the test
		os.Unsetenv("GOGC")
		SetDefaultGOGC()
		if got := os.Getenv("GOGC"); got != strconv.Itoa(GOGC) {
			t.Errorf("GOGC = %q, want %d for the binaries run", got, GOGC)
		}
		if got := debug.SetGCPercent(100); got != GOGC {
			t.Errorf("this process's GC percent = %d, want %d", got, GOGC)
		}
	})
	t.Run("the user's wins", func(t *testing.T) {
		t.Setenv("GOGC", "80")
		SetDefaultGOGC()
		if got := os.Getenv("GOGC"); got != "80" {
			t.Errorf("GOGC = %q, want the user's 80", got)
		}
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("this process's GC percent = %d, want 100 (unchanged)", got)
		}
	})
}
