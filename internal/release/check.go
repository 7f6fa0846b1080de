package release

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/clustersync/clustersync/internal/images"
)

// Checked is what Check found in one platform's image of a release.
type Checked struct {
	// Arch is the image's architecture.
	Arch string
	// Executables are the ELF files of the image, each checked to be for
	// Arch and static.
	Executables int
	// Probes are the image's probes that ran; 0 when they could not run
	// here (Skipped says why).
	Probes int
	// Runner is how the probes ran: "natively" or the emulator's name.
	Runner string
	// Skipped, when set, is why the probes did not run.
	Skipped string
}

// ProbeTimeout is how long one probe may take (an arm64 kube-apiserver
// printing its version under qemu-user-static takes a few seconds).
const ProbeTimeout = 2 * time.Minute

// Check pulls index ref (registry/repository:tag; insecure allows plain
// HTTP) back from its registry and, for each platform's image, unpacks its
// files into work and checks that every ELF file in it is a static
// executable for the image's architecture (images.RequireStatic), then
// starts each of probes: natively for the machine's own architecture
// (hostArch, runtime.GOARCH), under qemu (a qemu-aarch64-static; "" for
// none) for arm64 on another machine; a platform neither can run is
// reported Skipped. Errors name the image, the architecture and the file
// or probe, with the probe's output.
func Check(ctx context.Context, ref string, insecure bool, probes []images.Probe, work, hostArch, qemu string) ([]Checked, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, err
	}
	idx, err := remote.Index(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return nil, fmt.Errorf("release: pull %s: %w", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []Checked
	for _, d := range m.Manifests {
		if d.Platform == nil {
			return nil, fmt.Errorf("release: %s: manifest %s has no platform", ref, d.Digest)
		}
		arch := d.Platform.Architecture
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		root, err := os.MkdirTemp(work, "rootfs-"+arch+"-")
		if err != nil {
			return nil, err
		}
		c, err := checkImage(ctx, img, root, arch, probes, hostArch, qemu)
		_ = os.RemoveAll(root)
		if err != nil {
			return nil, fmt.Errorf("release: %s for %s: %w", ref, arch, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// checkImage unpacks img into root (images.Unpack), checks its executables for arch and
// runs probes (see Check).
func checkImage(ctx context.Context, img v1.Image, root, arch string, probes []images.Probe, hostArch, qemu string) (Checked, error) {
	c := Checked{Arch: arch}
	if err := images.Unpack(img, root); err != nil {
		return c, err
	}
	elves, err := elfFiles(root)
	if err != nil {
		return c, err
	}
	for _, f := range elves {
		if err := images.RequireStatic(filepath.Join(root, f), arch); err != nil {
			return c, fmt.Errorf("%s: %w", f, err)
		}
	}
	c.Executables = len(elves)
	var runner []string
	switch {
	case arch == hostArch:
		c.Runner = "natively"
	case arch == "arm64" && qemu != "":
		c.Runner, runner = filepath.Base(qemu), []string{qemu}
	default:
		c.Skipped = fmt.Sprintf("no emulator for %s here (hack/build-binaries.sh release fetches Debian's qemu-aarch64-static)", arch)
		return c, nil
	}
	for _, p := range probes {
		if err := probe(ctx, root, runner, p); err != nil {
			return c, err
		}
		c.Probes++
	}
	return c, nil
}

// probe runs p's command from root (through runner, when set) with an
// empty environment but PATH=/bin, and checks its output holds p.Want.
func probe(ctx context.Context, root string, runner []string, p images.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	argv := append(append(append([]string{}, runner...), filepath.Join(root, p.Args[0])), p.Args[1:]...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = []string{"PATH=/bin"}, root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) || ctx.Err() != nil {
		return fmt.Errorf("probe %q: %v (%s)", strings.Join(p.Args, " "), err, strings.TrimSpace(output.String()))
	}
	if !strings.Contains(output.String(), p.Want) {
		return fmt.Errorf("probe %q (%v): output lacks %q: %s", strings.Join(p.Args, " "), err, p.Want, strings.TrimSpace(output.String()))
	}
	return nil
}

// elfFiles returns the paths, relative to root, of the regular files
// below root that start with the ELF magic.
func elfFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		magic := make([]byte, len(elf.ELFMAG))
		_, rerr := io.ReadFull(f, magic)
		f.Close()
		if rerr == nil && string(magic) == elf.ELFMAG {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}
