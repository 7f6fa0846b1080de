package images

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// CheckImage unpacks img into a temporary folder and runs argv there once,
// chrooted, with the image's environment, /dev/null and /dev/zero: the way
// to know an image built without a container engine works before a pod
// pulls it. It needs root (chroot, mknod). It returns the command's output;
// errors carry it, and name a command that ran longer than timeout. The
// folder is removed when it returns.
func CheckImage(ctx context.Context, img v1.Image, argv []string, timeout time.Duration) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("images: no command to check the image with")
	}
	dir, err := os.MkdirTemp("", "clustersync-image-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := Unpack(img, dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
		return "", err
	}
	for _, d := range []struct {
		name       string
		major, min uint32
	}{{"null", 1, 3}, {"zero", 1, 5}} {
		p := filepath.Join(dir, "dev", d.name)
		_ = os.Remove(p)
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(d.major<<8|d.min)); err != nil {
			return "", fmt.Errorf("images: mknod %s (checking an image needs root): %w", p, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	// The program is looked up on the image's PATH, inside the image; the
	// child chroots before it executes it.
	prog := argv[0]
	if !strings.HasPrefix(prog, "/") {
		if prog, err = lookPathIn(dir, cf.Config.Env, prog); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, argv[1:]...)
	cmd.Env = cf.Config.Env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: dir}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("images: %q ran longer than %s:\n%s", strings.Join(argv, " "), timeout, out.String())
	}
	if err != nil {
		return out.String(), fmt.Errorf("images: %q: %w:\n%s", strings.Join(argv, " "), err, out.String())
	}
	return out.String(), nil
}

// lookPathIn finds name in the PATH of env (the image's), below root, and
// returns its path inside the image.
func lookPathIn(root string, env []string, name string) (string, error) {
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(resolveIn(root, p)); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("images: %s is not on the image's PATH %s", name, path)
}

// resolveIn follows the symbolic links of p (a path in the image) inside
// root, at most 40 times, and returns the machine's path of the result.
func resolveIn(root, p string) string {
	for range 40 {
		target, err := os.Readlink(filepath.Join(root, p))
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return filepath.Join(root, p)
}

// Unpack writes the file system of img (its layers flattened, whiteouts
// applied) into dir: regular files, folders, symbolic and hard links with
// their modes. Entries that would leave dir are refused.
func Unpack(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("images: unpack: %w", err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			continue
		}
		mode := os.FileMode(h.Mode & 0o777)
		if h.Mode&0o4000 != 0 {
			mode |= os.ModeSetuid
		}
		if h.Mode&0o2000 != 0 {
			mode |= os.ModeSetgid
		}
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.RemoveAll(p)
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		case tar.TypeLink:
			_ = os.RemoveAll(p)
			if err := os.Link(filepath.Join(dir, filepath.Clean("/"+h.Linkname)), p); err != nil {
				return err
			}
		case tar.TypeReg:
			_ = os.RemoveAll(p)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
		}
	}
}
