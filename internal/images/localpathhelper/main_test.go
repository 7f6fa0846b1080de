package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pvc-1_ns_claim")
	if err := run(dir, "create", "Filesystem"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o777 {
		t.Fatalf("after create: %v, %v", st, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, "delete", "Filesystem"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after delete the folder is still there: %v", err)
	}
	for _, tt := range []struct{ path, action, mode, want string }{
		{"relative/dir", "create", "Filesystem", "must be an absolute folder"},
		{"/", "delete", "Filesystem", "must be an absolute folder"},
		{"/opt", "delete", "Filesystem", "must be an absolute folder"},
		{dir, "create", "Block", "only Filesystem"},
		{dir, "resize", "Filesystem", "must be create or delete"},
	} {
		if err := run(tt.path, tt.action, tt.mode); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q, %q, %q) = %v, want an error saying %q", tt.path, tt.action, tt.mode, err, tt.want)
		}
	}
}
