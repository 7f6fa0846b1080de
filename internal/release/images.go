package release

import (
	"context"
	"fmt"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/clustersync/clustersync/internal/images"
)

// SourceImages builds each image of images.SourceImages for every
// architecture of images.Arches (its program cross-built into folder
// work), and pushes it to registry as one multi-arch index tagged with
// release version v (commit c in its labels); insecure allows plain HTTP.
// It returns the references pushed. Errors name the image and the
// architecture.
func SourceImages(ctx context.Context, moduleDir, work, v, c, registry string, insecure bool) ([]string, error) {
	var refs []string
	for _, si := range images.SourceImages() {
		var imgs []v1.Image
		for _, arch := range images.Arches() {
			bin := filepath.Join(work, filepath.Base(si.Package)+"-"+arch)
			if err := images.GoBuildFor(ctx, moduleDir, si.Package, bin, "linux", arch, ""); err != nil {
				return nil, fmt.Errorf("release: %s for %s: %w", si.Repository, arch, err)
			}
			img, err := si.Build(bin, images.Meta{Version: v, Revision: c, Arch: arch})
			if err != nil {
				return nil, fmt.Errorf("release: %s for %s: %w", si.Repository, arch, err)
			}
			imgs = append(imgs, img)
		}
		idx, err := images.Index(imgs...)
		if err != nil {
			return nil, err
		}
		if _, err := images.PushIndex(ctx, idx, registry, si.Repository, []string{v}, insecure); err != nil {
			return nil, err
		}
		refs = append(refs, images.Reference(registry, si.Repository, v))
	}
	return refs, nil
}
