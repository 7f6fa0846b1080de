//go:build !linux

package realnode

import "errors"

// unmountBelow unmounts every mount point below dir; a real node runs on
// Linux only, so elsewhere there is nothing to unmount.
func unmountBelow(string) error {
	return errors.New("realnode: the local real node runs on Linux only")
}
