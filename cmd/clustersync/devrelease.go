package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/release"
)

// newDevReleaseCommand returns `clustersync dev release`, which `make
// release` runs.
func newDevReleaseCommand() *cobra.Command {
	var dir, repo, source, v, commit, out, platformList string
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
oci://REPO/charts/manager), and every image the project runs, each as one
tag V holding a linux/amd64 and a linux/arm64 image, labelled with V and
the commit:

  clustersync/clustersync   the CLI above for that architecture, the static
                            control plane (kube-apiserver,
                            kube-controller-manager, kube-scheduler), CA
                            certificates
  clustersync/busybox       Debian's busybox-static (also tagged 1.35.0, the
                            virtual clusters' default rewrite-hosts image)
  clustersync/pause, clustersync/local-path-helper, clustersync/demo-app

Each pushed image is pulled back and checked: every ELF file in it is a
static executable of its architecture, and its programs start (amd64
natively; arm64 under Debian's qemu-aarch64-static when present).

The control plane and busybox of both architectures come from the cache
(hack/build-binaries.sh release, which make release runs); without them it
stops before building and names that command.`,
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
			platforms, err := release.ParsePlatforms(platformList)
			if err != nil {
				return fmt.Errorf("--platforms: %w", err)
			}
			arches := release.ImageArches(platforms)
			inputs := binaries.Release()
			if push {
				if err := inputs.Check(arches...); err != nil {
					return fmt.Errorf("the images of a release: %w", err)
				}
			}
			fmt.Fprintf(w, "Building release %s (commit %s) of %s into %s…\n", v, commit, tree, out)
			names, err := release.Binaries(cmd.Context(), release.Options{ModuleDir: tree, Out: out, Version: v, Commit: commit, Platforms: platforms})
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
				rows := release.Images(release.ImageInputs{ModuleDir: tree, Work: work, Version: v, Commit: commit, CLI: out,
					Binaries: inputs, CACertificates: defaultCABundle})
				pushed, err := release.PushImages(cmd.Context(), rows, arches, v, reg, plainHTTP)
				if err != nil {
					return err
				}
				for _, p := range pushed {
					var sizes []string
					for _, a := range arches {
						sizes = append(sizes, fmt.Sprintf("linux/%s %.1f MB", a, float64(p.Sizes[a])/1e6))
					}
					fmt.Fprintf(w, "Pushed %s%s: %s\n", p.Ref, tagsNote(p.Image.Tags), strings.Join(sizes, ", "))
					checked, err := release.Check(cmd.Context(), p.Ref, plainHTTP, p.Image.Probes, work, runtime.GOARCH, inputs.QemuAarch64)
					if err != nil {
						return err
					}
					for _, c := range checked {
						started := fmt.Sprintf("%d started %s", c.Probes, c.Runner)
						if c.Skipped != "" {
							started = "not started: " + c.Skipped
						}
						fmt.Fprintf(w, "  linux/%s: ELF files %d, each static and %s; probes %s\n", c.Arch, c.Executables, c.Arch, started)
					}
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
	cmd.Flags().StringVar(&platformList, "platforms", "", "OS/ARCH,… to build the CLI for (default all four); the images are built for the linux ones, e.g. linux/amd64 for a release a test installs on this machine")
	_ = cmd.MarkFlagRequired("version")
	return cmd
}

// tagsNote is " (also TAG, …)" for an image's extra tags, "" without any.
func tagsNote(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " (also " + strings.Join(tags, ", ") + ")"
}
