package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/release"
)

// newDevReleaseCommand returns `clustersync dev release`, which `make
// release` runs.
func newDevReleaseCommand() *cobra.Command {
	var dir, repo, source, v, commit, out string
	var push bool
	cmd := &cobra.Command{
		Use:   "release --version V",
		Short: "Build a release of the clustersync source tree into a folder and push its charts",
		Long: `Build release V (e.g. v0.2.0) of the clustersync source tree into --out
(make release VERSION=V runs it):

  clustersync-{linux,darwin}-{amd64,arm64}   the CLI: static, -trimpath, no build
                                             ID, V and the commit linked in;
                                             two builds of one commit with one
                                             Go are byte-identical
  <binary>.cdx.json                          a CycloneDX 1.6 SBOM of its Go modules
  manager-X.tgz, virtual-cluster-X.tgz       the charts, version X (V without
                                             the v), appVersion V: they deploy
                                             the images of V
  checksums.txt                              sha256sum -c format over them all

and push to --repo, by default the local registry of ` + "`clustersync dev up`" + `: the
charts as OCI artifacts (REPO/charts/NAME:X; helm install --version X
oci://REPO/charts/manager), and the images of one program each (pause,
local-path-helper, demo-app) as one tag V per image for linux/amd64 and
linux/arm64, labelled with V and the commit. The clustersync and busybox
images are not part of a release yet: ` + "`make image IMAGE_REPO=…`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			start := time.Now()
			tree, err := sourceTree(source)
			if err != nil {
				return err
			}
			reg, plainHTTP := repo, false
			if push && reg == "" {
				st, ok := registry.Running(registryDir(hostDir(dir)))
				if !ok {
					return fmt.Errorf("no local registry runs for %s to push the charts and images to: start the host with `clustersync dev up`, or give --repo (IMAGE_REPO to make release), or --push=false", hostDir(dir))
				}
				reg, plainHTTP = st.Addr, true
			}
			if commit == "" {
				c, err := exec.CommandContext(cmd.Context(), "git", "-C", tree, "rev-parse", "--short=12", "HEAD").Output()
				if err != nil {
					return fmt.Errorf("--commit: not given, and git cannot tell the source tree's: %v", err)
				}
				commit = strings.TrimSpace(string(c))
			}
			fmt.Fprintf(w, "Building release %s (commit %s) of %s into %s…\n", v, commit, tree, out)
			names, err := release.Binaries(cmd.Context(), release.Options{ModuleDir: tree, Out: out, Version: v, Commit: commit})
			if err != nil {
				return err
			}
			chartFiles, err := release.Charts(out, v)
			if err != nil {
				return err
			}
			all := append(names, chartFiles...)
			sums, err := release.Checksums(out, all)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, release.ChecksumsName), sums, 0o644); err != nil {
				return err
			}
			for _, n := range append(all, release.ChecksumsName) {
				st, err := os.Stat(filepath.Join(out, n))
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "  %-44s %8.1f MB\n", n, float64(st.Size())/1e6)
			}
			if push {
				refs, err := release.PushCharts(out, chartFiles, reg, plainHTTP)
				if err != nil {
					return err
				}
				for _, r := range refs {
					fmt.Fprintf(w, "Pushed oci://%s\n", r)
				}
				work, err := os.MkdirTemp("", "clustersync-release-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(work)
				refs, err = release.SourceImages(cmd.Context(), tree, work, v, commit, reg, plainHTTP)
				if err != nil {
					return err
				}
				for _, r := range refs {
					fmt.Fprintf(w, "Pushed %s (linux/amd64, linux/arm64)\n", r)
				}
			}
			fmt.Fprintf(w, "Release %s in %s, %.0f s.\n", v, out, time.Since(start).Seconds())
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&v, "version", "", "the release version, e.g. v0.2.0 (required)")
	cmd.Flags().StringVar(&commit, "commit", "", "the commit it is built from (default the source tree's Git HEAD)")
	cmd.Flags().StringVar(&out, "out", "dist", "the folder the release goes to")
	cmd.Flags().StringVar(&repo, "repo", "", "registry host (and optional path) to push the charts and images to, e.g. ghcr.io/me (default the local registry of --dir)")
	cmd.Flags().StringVar(&source, "source", "", "the clustersync source tree (default the one that holds the current folder)")
	cmd.Flags().BoolVar(&push, "push", true, "push the charts and images")
	_ = cmd.MarkFlagRequired("version")
	return cmd
}
