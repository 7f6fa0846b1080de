// Command local-path-helper makes and removes the folders of volumes that
// rancher/local-path-provisioner hands out on the local real node (the
// default StorageClass of `clustersync dev up`), built into the image
// ghcr.io/clustersync/local-path-helper. The provisioner runs it in a
// helper pod as its setupCommand and teardownCommand with
//
//	-p PATH -s SIZE_BYTES -m Filesystem|Block -a create|delete
//
// (PATH inside the helper pod's hostPath mount of the volumes' parent
// folder). Upstream, a busybox shell runs a script for this; nothing can be
// pulled from public registries on the machines clustersync's tests run on,
// and two file operations do not need a shell, so the project builds this
// instead.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	path := flag.String("p", "", "the volume's folder (absolute)")
	action := flag.String("a", "", "create or delete")
	mode := flag.String("m", "Filesystem", "volume mode; only Filesystem is supported")
	flag.Int64("s", 0, "requested size in bytes (not enforced)")
	flag.Parse()
	if err := run(*path, *action, *mode); err != nil {
		fmt.Fprintln(os.Stderr, "local-path-helper:", err)
		os.Exit(1)
	}
}

// run creates (mode 0777, as upstream's script does, so any pod user may
// write) or removes the folder path.
func run(path, action, mode string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) == "/" || filepath.Dir(filepath.Clean(path)) == "/" {
		return fmt.Errorf("-p %q must be an absolute folder below a parent folder", path)
	}
	if mode != "Filesystem" {
		return fmt.Errorf("-m %q: only Filesystem volumes are supported", mode)
	}
	switch action {
	case "create":
		if err := os.MkdirAll(path, 0o777); err != nil {
			return err
		}
		return os.Chmod(path, 0o777)
	case "delete":
		return os.RemoveAll(path)
	default:
		return fmt.Errorf("-a %q must be create or delete", action)
	}
}
