package images

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/clustersync/clustersync/internal/version"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// BuildOptions are the inputs of BuildAll.
type BuildOptions struct {
	// ModuleDir is the clustersync source tree (where go.mod is).
	ModuleDir string
	// WorkDir receives the compiled binaries.
	WorkDir string
	// Version is clustersync's version: the binary's (internal/version)
	// and the images' version label.
	Version string
	// Commit is the commit the binary is built from ("" for unknown).
	Commit string
	// ControlPlane are the static kube-apiserver, kube-controller-manager
	// and kube-scheduler (hack/build-binaries.sh static).
	ControlPlane []string
	// CACertificates is the CA bundle for the clustersync image.
	CACertificates string
}

// Built is one image BuildAll made.
type Built struct {
	// Repository is where it goes under a registry, e.g.
	// "clustersync/clustersync".
	Repository string
	Image      v1.Image
}

// BuildAll compiles clustersync and the program of each SourceImages row
// as static linux/amd64 binaries in o.WorkDir and builds their images
// (Clustersync, then the table's, in its order).
func BuildAll(ctx context.Context, o BuildOptions) ([]Built, error) {
	cs, err := BuildClustersync(ctx, o)
	if err != nil {
		return nil, err
	}
	built := []Built{{ClustersyncRepository, cs}}
	for _, si := range SourceImages() {
		bin := filepath.Join(o.WorkDir, filepath.Base(si.Package))
		if err := GoBuild(ctx, o.ModuleDir, si.Package, bin, ""); err != nil {
			return nil, err
		}
		img, err := si.Build(bin, Meta{Version: o.Version, Revision: o.Commit})
		if err != nil {
			return nil, err
		}
		built = append(built, Built{si.Repository, img})
	}
	return built, nil
}

// BuildClustersync compiles clustersync as a static binary in o.WorkDir
// (version o.Version) and builds the clustersync image (Clustersync) from
// it and o.ControlPlane. After `make build`, which compiles with the same
// flags, the compile is a link.
func BuildClustersync(ctx context.Context, o BuildOptions) (v1.Image, error) {
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(o.WorkDir, "clustersync")
	if err := GoBuild(ctx, o.ModuleDir, "./cmd/clustersync", bin, version.LDFlags(o.Version, o.Commit)); err != nil {
		return nil, err
	}
	return Clustersync(ClustersyncSources{Binary: bin, ControlPlane: o.ControlPlane, CACertificates: o.CACertificates, Meta: Meta{Version: o.Version, Revision: o.Commit}})
}

// Push writes img to registry/repository under each tag, with the
// credentials of the Docker config (~/.docker/config.json, $DOCKER_CONFIG)
// when there are any; insecure allows plain HTTP (the local registry). It returns the image's digest and its
// size: the bytes a pull transfers (compressed layers, config, manifest).
func Push(ctx context.Context, img v1.Image, registry, repository string, tags []string, insecure bool) (v1.Hash, int64, error) {
	refs, err := references(registry, repository, tags, insecure)
	if err != nil {
		return v1.Hash{}, 0, err
	}
	for _, ref := range refs {
		if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return v1.Hash{}, 0, fmt.Errorf("push %s: %w", ref, err)
		}
	}
	d, err := img.Digest()
	if err != nil {
		return v1.Hash{}, 0, err
	}
	size, err := Size(img)
	return d, size, err
}

// references are registry/repository:tag for each tag; insecure allows
// plain HTTP.
func references(registry, repository string, tags []string, insecure bool) ([]name.Reference, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	var refs []name.Reference
	for _, tag := range tags {
		ref, err := name.ParseReference(Reference(registry, repository, tag), opts...)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// Exists reports whether registry/repository:tag names an image there
// (a HEAD of its manifest); insecure allows plain HTTP. A registry that
// answers "not found" gives false and no error.
func Exists(ctx context.Context, registry, repository, tag string, insecure bool) (bool, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(Reference(registry, repository, tag), opts...)
	if err != nil {
		return false, err
	}
	_, err = remote.Head(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

// Size is the bytes a pull of img transfers: manifest, config and
// (compressed) layers.
func Size(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	total := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		total += l.Size
	}
	return total, nil
}

// PushIndex writes idx to registry/repository under each tag, as Push
// writes an image; it returns the index's digest.
func PushIndex(ctx context.Context, idx v1.ImageIndex, registry, repository string, tags []string, insecure bool) (v1.Hash, error) {
	refs, err := references(registry, repository, tags, insecure)
	if err != nil {
		return v1.Hash{}, err
	}
	for _, ref := range refs {
		if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
		}
	}
	return idx.Digest()
}
