// Package release builds what a clustersync release ships (`make
// release`, `clustersync dev release`): the CLI for each platform of Platforms, each
// with a CycloneDX SBOM of its Go modules (SBOM), and one checksums file
// over them all (Checksums), into one folder. Everything is reproducible:
// two releases of one commit with one Go are byte-identical (static
// binaries built with images.GoBuildFor's flags; SBOMs and checksums
// without times or random IDs).
package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/version"
)

// Platform is one target of the CLI: GOOS and GOARCH.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the CLI's release targets: Linux and macOS, each on amd64
// and arm64.
func Platforms() []Platform {
	return []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}
}

// ParsePlatforms parses a comma-separated list of OS/ARCH
// ("linux/amd64,darwin/arm64") into platforms of Platforms, in the order
// given; "" gives Platforms(). Errors name an entry that is not one of
// them.
func ParsePlatforms(s string) ([]Platform, error) {
	if s == "" {
		return Platforms(), nil
	}
	var out []Platform
	for _, e := range strings.Split(s, ",") {
		found := false
		for _, p := range Platforms() {
			if p.String() == strings.TrimSpace(e) {
				out, found = append(out, p), true
			}
		}
		if !found {
			return nil, fmt.Errorf("release: platform %q: want some of %v", e, Platforms())
		}
	}
	return out, nil
}

// ImageArches are the architectures of the linux platforms of ps, in
// images.Arches order: those a release's images are built for.
func ImageArches(ps []Platform) []string {
	var out []string
	for _, a := range images.Arches() {
		for _, p := range ps {
			if p.OS == "linux" && p.Arch == a {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// BinaryName is the file name of the CLI for p in a release:
// "clustersync-linux-amd64".
func BinaryName(p Platform) string { return "clustersync-" + p.OS + "-" + p.Arch }

// SBOMName is the file name of the SBOM of binary name:
// "clustersync-linux-amd64.cdx.json".
func SBOMName(binary string) string { return binary + ".cdx.json" }

// ChecksumsName is the file name of the checksums file.
const ChecksumsName = "checksums.txt"

// Options are the inputs of Binaries.
type Options struct {
	// ModuleDir is the clustersync source tree (where go.mod is).
	ModuleDir string
	// Out is the folder the artifacts go to (made when missing).
	Out string
	// Version is the release version, e.g. "v0.2.0" (not version.Dev);
	// Commit the commit it is built from.
	Version, Commit string
	// Platforms are the targets; nil means Platforms().
	Platforms []Platform
}

// Binaries builds the CLI for each of o's platforms into o.Out
// (BinaryName) and writes each one's SBOM beside it (SBOMName). It returns
// the files' names, for Checksums. Errors name the platform or the file; a
// version that is not a release is refused.
func Binaries(ctx context.Context, o Options) ([]string, error) {
	if err := checkVersion(o.Version); err != nil {
		return nil, err
	}
	if o.Commit == "" {
		return nil, errors.New("release: the commit is unknown (COMMIT, or a Git checkout)")
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	platforms := o.Platforms
	if platforms == nil {
		platforms = Platforms()
	}
	var names []string
	for _, p := range platforms {
		bin := BinaryName(p)
		path := filepath.Join(o.Out, bin)
		if err := images.GoBuildFor(ctx, o.ModuleDir, "./cmd/clustersync", path, p.OS, p.Arch, version.LDFlags(o.Version, o.Commit)); err != nil {
			return nil, fmt.Errorf("release: %s: %w", p, err)
		}
		sbom, err := SBOM(path, o.Version)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(o.Out, SBOMName(bin)), sbom, 0o644); err != nil {
			return nil, err
		}
		names = append(names, bin, SBOMName(bin))
	}
	return names, nil
}

// checkVersion refuses v unless it is a release version.
func checkVersion(v string) error {
	if !version.Released(v) {
		return fmt.Errorf("release: version %q: set a release version, e.g. VERSION=v0.2.0", v)
	}
	return nil
}
