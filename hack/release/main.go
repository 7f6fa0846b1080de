// Command release builds a clustersync release into a folder (`make
// release VERSION=v0.2.0`): the CLI for Linux and macOS on amd64 and
// arm64, each with its CycloneDX SBOM, and checksums.txt
// (internal/release). It prints each artifact with its size.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clustersync/clustersync/internal/release"
)

func main() {
	var o release.Options
	flag.StringVar(&o.Version, "version", "", "the release version, e.g. v0.2.0")
	flag.StringVar(&o.Commit, "commit", "", "the commit it is built from")
	flag.StringVar(&o.Out, "out", "dist", "the folder the artifacts go to")
	flag.StringVar(&o.ModuleDir, "source", ".", "the clustersync source tree")
	flag.Parse()
	start := time.Now()
	names, err := release.Binaries(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, n := range append(names, release.ChecksumsName) {
		st, err := os.Stat(filepath.Join(o.Out, n))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("  %-40s %8.1f MB\n", n, float64(st.Size())/1e6)
	}
	fmt.Printf("release %s (commit %s) in %s, %.0f s\n", o.Version, o.Commit, o.Out, time.Since(start).Seconds())
}
