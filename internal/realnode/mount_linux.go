package realnode

import (
	"errors"
	"fmt"
	"slices"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// unmountBelow unmounts (lazily, deepest first) every mount point below
// dir: containerd's snapshots and pod network namespaces, the kubelet's
// volume mounts.
func unmountBelow(dir string) error {
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return err
	}
	slices.SortFunc(mounts, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	var errs []error
	for _, m := range mounts {
		if err := unix.Unmount(m.Mountpoint, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("%s: %w", m.Mountpoint, err))
		}
	}
	return errors.Join(errs...)
}
