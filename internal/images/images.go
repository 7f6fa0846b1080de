// Package images builds clustersync's container images without a container
// engine, with go-containerregistry: the clustersync image (the static
// clustersync binary, the control plane it runs, CA certificates, a
// non-root user), the sandbox ("pause") image of the local real node, and
// the demo web server of examples/demo. Builds are reproducible: the same
// inputs give the same digest (files in name order, fixed owners, modes and
// times, a fixed creation time, Go binaries built with -trimpath and no
// build ID). Every image is for linux and one architecture of Arches
// (amd64 unless Config.Arch says otherwise), which containerd needs to find
// a matching platform; Index puts one image per architecture under one tag.
package images

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the time every file and image is stamped with (the Unix epoch),
// so that the digest depends on content only.
var Epoch = time.Unix(0, 0).UTC()

// NonRootUID is the user and group ID images run as (distroless's
// "nonroot").
const NonRootUID = 65532

// File is one file of a layer.
type File struct {
	// Path is the absolute path in the image, e.g. "/clustersync".
	Path string
	// Mode is the permission bits, e.g. 0o755.
	Mode int64
	// Source is the host file to copy; empty means Data.
	Source string
	// Data is the content when Source is empty.
	Data []byte
	// Dir makes the entry a directory (Source and Data unused).
	Dir bool
	// Link, when set, makes the entry a symbolic link to Link (Source, Data
	// and Mode unused), e.g. "busybox" for /bin/sh.
	Link string
	// Owner is the user ID owning the entry (0: root), and its group ID
	// unless Group is set.
	Owner int
	// Group is the group ID owning the entry when it is not Owner's
	// (0: Owner's).
	Group int
}

// Layer returns a gzip-compressed OCI layer holding files, with their
// parent directories (mode 0755, root's), in path order, stamped with
// Epoch. Errors name a file that cannot be read or a path that is not
// absolute.
func Layer(files []File) (v1.Layer, error) {
	entries := map[string]File{}
	for _, f := range files {
		if !path.IsAbs(f.Path) {
			return nil, fmt.Errorf("images: path %q is not absolute", f.Path)
		}
		p := path.Clean(f.Path)
		entries[p] = f
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = File{Path: d, Mode: 0o755, Dir: true}
			}
		}
	}
	names := make([]string, 0, len(entries))
	for p := range entries {
		names = append(names, p)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range names {
		f := entries[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: f.Mode, ModTime: Epoch, Uid: f.Owner, Gid: cmp.Or(f.Group, f.Owner), Format: tar.FormatPAX}
		if f.Dir || f.Link != "" {
			if f.Dir {
				h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			} else {
				h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.Link, 0o777
			}
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
			continue
		}
		data := f.Data
		if f.Source != "" {
			var err error
			if data, err = os.ReadFile(f.Source); err != nil {
				return nil, fmt.Errorf("images: %s: %w", f.Path, err)
			}
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithMediaType(types.OCILayer))
}

// Config is what an image runs.
type Config struct {
	// Entrypoint and Cmd as in the OCI image config.
	Entrypoint, Cmd []string
	// User is "uid:gid"; empty means root.
	User string
	// Env is KEY=VALUE entries.
	Env []string
	// Labels are the image's labels (org.opencontainers.image.*).
	Labels map[string]string
	// Arch is the image's architecture, "amd64" or "arm64" (Arches); ""
	// means amd64.
	Arch string
}

// Arches are the architectures clustersync's images are built for: one
// linux image each, under one index (Index).
func Arches() []string { return []string{"amd64", "arm64"} }

// Image assembles an OCI image (manifest and config of the OCI media types)
// from layers, for linux/c.Arch (amd64 when empty), created at Epoch.
func Image(layers []v1.Layer, c Config) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	adds := make([]mutate.Addendum, 0, len(layers))
	for _, l := range layers {
		adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: Epoch}, CreatedBy: "clustersync images"}})
	}
	img, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", cmp.Or(c.Arch, "amd64")
	cf.Created = v1.Time{Time: Epoch}
	cf.Config = v1.Config{Entrypoint: c.Entrypoint, Cmd: c.Cmd, User: c.User, Env: c.Env, Labels: c.Labels}
	return mutate.ConfigFile(img, cf)
}

// Index returns the OCI image index of imgs, one per platform (linux and
// each image's architecture, from its config), in the order given: what a
// multi-arch tag points to, from which each node pulls its own. Errors
// name an architecture given twice.
func Index(imgs ...v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]bool{}
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if seen[cf.Architecture] {
			return nil, fmt.Errorf("images: two images for %s/%s in one index", cf.OS, cf.Architecture)
		}
		seen[cf.Architecture] = true
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture}}})
	}
	return idx, nil
}
