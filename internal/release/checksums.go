package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Checksums returns the checksums file of the files names in folder dir:
// one line "<SHA-256 in hex>  <name>" per file, sorted by name, the format
// `sha256sum -c` checks. Errors name a file that cannot be read.
func Checksums(dir string, names []string) ([]byte, error) {
	var b strings.Builder
	for _, name := range slices.Sorted(slices.Values(names)) {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("release: checksum of %s: %w", name, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("release: checksum of %s: %w", name, err)
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return []byte(b.String()), nil
}
