package chrome

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// A chromium that crashes while it starts is started once more: here a
// chromium on PATH that kills itself with SIGSEGV the first time and runs
// Debian's chromium the second.
func TestNewRestartsACrashedStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts chromium")
	}
	real, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (make binaries installs it)")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ ! -e " + filepath.Join(dir, "crashed") + " ]; then touch " + filepath.Join(dir, "crashed") +
		"; kill -SEGV $$; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "chromium"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := New(t)
	Run(t, ctx, "open a page", chromedp.Navigate("about:blank"))
	if _, err := os.Stat(filepath.Join(dir, "crashed")); err != nil {
		t.Errorf("the first start did not crash: %v", err)
	}
}
