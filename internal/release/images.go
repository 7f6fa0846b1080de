package release

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/version"
)

// ImageInputs are what a release's images are built from.
type ImageInputs struct {
	// ModuleDir is the clustersync source tree (where go.mod is).
	ModuleDir string
	// Work is a folder for the programs cross-built for the images.
	Work string
	// Version is the release version (the tag of every image), Commit its
	// commit (the images' revision label).
	Version, Commit string
	// CLI is the folder of the release's CLI binaries (Binaries'
	// BinaryName files for linux): the clustersync image of each
	// architecture holds that same file.
	CLI string
	// Binaries are the static control plane and busybox-static of each
	// architecture (hack/build-binaries.sh release).
	Binaries binaries.ReleaseSet
	// CACertificates is the PEM bundle the clustersync image holds.
	CACertificates string
}

// Image is one image of a release: a row of Images.
type Image struct {
	// Repository is where it goes under a registry
	// (images.ClustersyncRepository).
	Repository string
	// Tags are its tags besides the release version: busybox keeps its
	// own version's tag (images.BusyboxTag), which virtual clusters'
	// default rewrite-hosts image names.
	Tags []string
	// Build makes its image for architecture arch ("amd64", "arm64").
	Build func(ctx context.Context, arch string) (v1.Image, error)
	// Probes start its programs to check they run (Check).
	Probes []images.Probe
}

// Images is the table of the images a release ships, each built for every
// architecture of images.Arches: clustersync (with the control plane),
// busybox, and each row of images.SourceImages.
func Images(in ImageInputs) []Image {
	meta := func(arch string) images.Meta {
		return images.Meta{Version: in.Version, Revision: in.Commit, Arch: arch}
	}
	kube := func(name string) images.Probe {
		return images.Probe{Args: []string{filepath.Join(images.ControlPlaneDir, name), "--version"}, Want: "Kubernetes " + binaries.KubernetesVersion}
	}
	rows := []Image{
		{
			Repository: images.ClustersyncRepository,
			Build: func(_ context.Context, arch string) (v1.Image, error) {
				return images.Clustersync(images.ClustersyncSources{
					Binary:         filepath.Join(in.CLI, BinaryName(Platform{"linux", arch})),
					ControlPlane:   in.Binaries.ControlPlane[arch],
					CACertificates: in.CACertificates,
					Meta:           meta(arch),
				})
			},
			Probes: []images.Probe{
				{Args: []string{"/clustersync", "version"}, Want: version.String(in.Version, in.Commit)},
				kube("kube-apiserver"), kube("kube-controller-manager"), kube("kube-scheduler"),
			},
		},
		{
			Repository: images.BusyboxRepository,
			Tags:       []string{images.BusyboxTag},
			Build: func(_ context.Context, arch string) (v1.Image, error) {
				return images.Busybox(in.Binaries.Busybox[arch], meta(arch))
			},
			Probes: []images.Probe{
				{Args: []string{"/bin/busybox"}, Want: "BusyBox v" + images.BusyboxTag},
				{Args: []string{"/bin/sh", "-c", "echo started"}, Want: "started"},
			},
		},
	}
	for _, si := range images.SourceImages() {
		rows = append(rows, Image{
			Repository: si.Repository,
			Build: func(ctx context.Context, arch string) (v1.Image, error) {
				bin := filepath.Join(in.Work, filepath.Base(si.Package)+"-"+arch)
				if err := images.GoBuildFor(ctx, in.ModuleDir, si.Package, bin, "linux", arch, ""); err != nil {
					return nil, err
				}
				return si.Build(bin, meta(arch))
			},
			Probes: si.Probes,
		})
	}
	return rows
}

// Pushed is one image a release pushed.
type Pushed struct {
	// Image is its row of Images.
	Image Image
	// Ref is registry/repository:version.
	Ref string
	// Digest is the index's digest.
	Digest v1.Hash
	// Sizes are the bytes a pull of each architecture's image transfers
	// (images.Size), by architecture.
	Sizes map[string]int64
}

// PushImages builds each image of rows for every architecture of arches
// (ImageArches; images.Arches for a whole release) and pushes it to registry as one multi-arch index tagged
// with version v and the row's Tags; insecure allows plain HTTP. Errors
// name the image and the architecture.
func PushImages(ctx context.Context, rows []Image, arches []string, v, registry string, insecure bool) ([]Pushed, error) {
	if err := checkVersion(v); err != nil {
		return nil, err
	}
	if len(arches) == 0 {
		return nil, errors.New("release: no architecture to build the images for (a linux platform)")
	}
	var pushed []Pushed
	for _, row := range rows {
		p := Pushed{Image: row, Ref: images.Reference(registry, row.Repository, v), Sizes: map[string]int64{}}
		var imgs []v1.Image
		for _, arch := range arches {
			img, err := row.Build(ctx, arch)
			if err != nil {
				return nil, fmt.Errorf("release: %s for %s: %w", row.Repository, arch, err)
			}
			if p.Sizes[arch], err = images.Size(img); err != nil {
				return nil, err
			}
			imgs = append(imgs, img)
		}
		idx, err := images.Index(imgs...)
		if err != nil {
			return nil, err
		}
		if p.Digest, err = images.PushIndex(ctx, idx, registry, row.Repository, append([]string{v}, row.Tags...), insecure); err != nil {
			return nil, err
		}
		pushed = append(pushed, p)
	}
	return pushed, nil
}
