// Package ports hands out the TCP ports of this machine's local servers
// that must get the same port back when they restart: the control planes of
// the local host clusters (internal/hostcluster), of the virtual control
// planes run as processes (internal/virtual/controlplane) and the local
// registry of `clustersync dev up`. A port is leased to an owner, a state
// folder, and stays leased while that folder exists, also while its server
// is stopped, so no two servers, in any process of the machine, are ever
// handed the same port.
//
// Why an allocator of our own: the kernel's port 0 and kwokctl's probing
// (it takes the first port from 32767 downwards that nothing listens on at
// that moment) both hand out a port that nothing listens on, which is the
// port of any server that happens to be down (a stopped cluster, an API
// server between a kill and its restart): the next cluster created
// anywhere on the machine would take it. And the kernel's ephemeral range
// (net.ipv4.ip_local_port_range) is also where every outgoing connection
// takes its local port, so a server there can find its port taken by a
// client while it restarts. No library keeps leases across processes; the
// leases are files under one flock in the temporary folder.
//
// Ports come from DefaultBand minus the kernel's ephemeral range and
// Kubernetes' default NodePort range (30000-32767, which kube-proxy of the
// local real node answers on every address of the machine).
package ports

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Band is an inclusive range of TCP ports.
type Band struct{ First, Last int }

// Contains reports whether port is in b.
func (b Band) Contains(port int) bool { return b.First <= port && port <= b.Last }

// String is "FIRST-LAST".
func (b Band) String() string { return fmt.Sprintf("%d-%d", b.First, b.Last) }

// DefaultBand is where ports are handed out from: below Kubernetes'
// NodePort range and Linux's default ephemeral range (32768-60999).
func DefaultBand() Band { return Band{First: 20000, Last: 29999} }

// NodePortBand is Kubernetes' default Service node port range
// (kube-apiserver --service-node-port-range), never handed out.
func NodePortBand() Band { return Band{First: 30000, Last: 32767} }

// ephemeralRangeFile is the Linux sysctl of the ports the kernel gives
// outgoing connections and port-0 listeners
// (https://docs.kernel.org/networking/ip-sysctl.html, ip_local_port_range).
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Registry leases ports to owners. Its zero value is not usable; use
// Default, or set every field.
type Registry struct {
	// Dir holds the lock file and one lease file per owner.
	Dir string
	// Band is where ports are taken from, minus Exclude.
	Band Band
	// Exclude are ranges never handed out.
	Exclude []Band
	// InUse reports whether port cannot be bound now (Bindable's opposite
	// by default); a port in use is skipped.
	InUse func(port int) bool
}

// Default is the machine's registry: leases in $TMPDIR/clustersync-ports,
// ports from DefaultBand minus NodePortBand and the kernel's ephemeral
// range (read from /proc/sys/net/ipv4/ip_local_port_range where it
// exists). Every process of the machine that uses Default shares it.
func Default() *Registry {
	exclude := []Band{NodePortBand()}
	if data, err := os.ReadFile(ephemeralRangeFile); err == nil {
		if b, err := parseBand(string(data)); err == nil {
			exclude = append(exclude, b)
		}
	}
	return &Registry{
		Dir:     filepath.Join(os.TempDir(), "clustersync-ports"),
		Band:    DefaultBand(),
		Exclude: exclude,
		InUse:   func(port int) bool { return !Bindable(port) },
	}
}

// parseBand parses the sysctl's "FIRST<whitespace>LAST".
func parseBand(s string) (Band, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Band{}, fmt.Errorf("ports: %q is not FIRST LAST", s)
	}
	first, err1 := strconv.Atoi(f[0])
	last, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil || first > last {
		return Band{}, fmt.Errorf("ports: %q is not FIRST LAST", s)
	}
	return Band{First: first, Last: last}, nil
}

// lease is the file of one owner's ports.
type lease struct {
	Owner string `json:"owner"`
	Ports []int  `json:"ports"`
}

// leaseFile is the file of owner's lease: a hash of its path, so any path
// fits in a file name.
func (r *Registry) leaseFile(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return filepath.Join(r.Dir, hex.EncodeToString(sum[:8])+".json")
}

// Reserve leases n new ports to owner, an absolute path of a folder that
// exists for as long as the ports are needed (a cluster's state folder),
// and returns them in ascending order. They are added to owner's lease,
// if it has one. Leases of owners whose folder is gone are dropped first.
// It waits for the registry's lock at most until ctx ends. Errors: owner
// not absolute or missing, no n free ports in the band, or I/O.
func (r *Registry) Reserve(ctx context.Context, owner string, n int) ([]int, error) {
	_, added, err := r.lease(ctx, owner, func([]int) int { return n })
	return added, err
}

// Ensure returns the n lowest ports leased to owner, leasing more first if
// it has fewer: for a server whose port is not recorded anywhere else and
// must stay the same across its restarts. Errors are Reserve's.
func (r *Registry) Ensure(ctx context.Context, owner string, n int) ([]int, error) {
	mine, added, err := r.lease(ctx, owner, func(mine []int) int { return max(n-len(mine), 0) })
	if err != nil {
		return nil, err
	}
	return slices.Sorted(slices.Values(slices.Concat(mine, added)))[:n], nil
}

// lease leases want(owner's ports) new ports to owner; it returns the
// ports owner had and the ones added.
func (r *Registry) lease(ctx context.Context, owner string, want func(mine []int) int) (mine, added []int, err error) {
	if err := checkOwner(owner); err != nil {
		return nil, nil, err
	}
	err = r.locked(ctx, func(leases []lease) ([]lease, error) {
		held := map[int]bool{}
		for _, l := range leases {
			for _, p := range l.Ports {
				held[p] = true
			}
			if l.Owner == owner {
				mine = l.Ports
			}
		}
		var err error
		if added, err = pick(r.Band, r.Exclude, held, r.InUse, want(mine)); err != nil {
			return nil, err
		}
		return addPorts(leases, owner, added), nil
	})
	return mine, added, err
}

// Hold records ports as owner's, e.g. ports a cluster got before this
// registry existed, or after the temporary folder was emptied; ports owner
// holds already are left as they are. A port another owner holds is an
// error naming that owner; nothing is recorded then.
func (r *Registry) Hold(ctx context.Context, owner string, ports []int) error {
	if err := checkOwner(owner); err != nil {
		return err
	}
	return r.locked(ctx, func(leases []lease) ([]lease, error) {
		for _, l := range leases {
			if l.Owner == owner {
				continue
			}
			for _, p := range ports {
				if slices.Contains(l.Ports, p) {
					return nil, fmt.Errorf("ports: port %d of %s is leased to %s, which exists: delete one of the two", p, owner, l.Owner)
				}
			}
		}
		return addPorts(leases, owner, ports), nil
	})
}

// Release ends owner's lease: its ports may be handed out again. Call it
// once owner's servers have exited and released them (see WaitReleased).
func (r *Registry) Release(ctx context.Context, owner string) error {
	return r.locked(ctx, func(leases []lease) ([]lease, error) {
		return slices.DeleteFunc(leases, func(l lease) bool { return l.Owner == owner }), nil
	})
}

// Owner returns the owner that leases port, or "".
func (r *Registry) Owner(port int) string {
	leases, err := r.read()
	if err != nil {
		return ""
	}
	for _, l := range leases {
		if slices.Contains(l.Ports, port) {
			return l.Owner
		}
	}
	return ""
}

func checkOwner(owner string) error {
	if !filepath.IsAbs(owner) {
		return fmt.Errorf("ports: owner %q is not an absolute path", owner)
	}
	if _, err := os.Stat(owner); err != nil {
		return fmt.Errorf("ports: owner: %w", err)
	}
	return nil
}

// addPorts adds ports to owner's lease in leases (a new one if it has
// none), keeping each lease's ports sorted and unique.
func addPorts(leases []lease, owner string, ports []int) []lease {
	i := slices.IndexFunc(leases, func(l lease) bool { return l.Owner == owner })
	if i < 0 {
		leases = append(leases, lease{Owner: owner})
		i = len(leases) - 1
	}
	all := slices.Concat(leases[i].Ports, ports)
	slices.Sort(all)
	leases[i].Ports = slices.Compact(all)
	return leases
}

// pick returns the n lowest ports of band that are neither excluded, nor
// held, nor in use. The lowest first, so that a machine's servers keep
// the same ports from run to run.
func pick(band Band, exclude []Band, held map[int]bool, inUse func(int) bool, n int) ([]int, error) {
	var got []int
	for p := band.First; p <= band.Last && len(got) < n; p++ {
		if held[p] || slices.ContainsFunc(exclude, func(b Band) bool { return b.Contains(p) }) {
			continue
		}
		if inUse != nil && inUse(p) {
			continue
		}
		got = append(got, p)
	}
	if len(got) < n {
		ex := make([]string, len(exclude))
		for i, b := range exclude {
			ex[i] = b.String()
		}
		return nil, fmt.Errorf("ports: %d free ports wanted in %s (minus %s, the leased and the ones in use), %d found", n, band, strings.Join(ex, ", "), len(got))
	}
	return got, nil
}

// locked runs update on the leases of live owners under the registry's
// lock and writes back what it returns: a lease file per owner, removed
// for owners no longer there.
func (r *Registry) locked(ctx context.Context, update func([]lease) ([]lease, error)) error {
	if err := os.MkdirAll(r.Dir, 0o777); err != nil {
		return fmt.Errorf("ports: %w", err)
	}
	unlock, err := Lock(ctx, filepath.Join(r.Dir, "lock"))
	if err != nil {
		return err
	}
	defer unlock()
	leases, err := r.read()
	if err != nil {
		return err
	}
	live := slices.DeleteFunc(slices.Clone(leases), func(l lease) bool {
		_, err := os.Stat(l.Owner)
		return errors.Is(err, fs.ErrNotExist)
	})
	next, err := update(live)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, l := range next {
		keep[l.Owner] = true
		data, _ := json.Marshal(l)
		if err := writeFile(r.leaseFile(l.Owner), data); err != nil {
			return err
		}
	}
	for _, l := range leases {
		if !keep[l.Owner] {
			if err := os.Remove(r.leaseFile(l.Owner)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("ports: %w", err)
			}
		}
	}
	return nil
}

// read returns every lease on file, sorted by owner.
func (r *Registry) read() ([]lease, error) {
	files, err := filepath.Glob(filepath.Join(r.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var leases []lease
	for _, f := range files {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ports: %w", err)
		}
		var l lease
		if err := json.Unmarshal(data, &l); err != nil || l.Owner == "" {
			continue // not ours, or torn: its owner gets it back with Hold
		}
		leases = append(leases, l)
	}
	slices.SortFunc(leases, func(a, b lease) int { return cmp.Compare(a.Owner, b.Owner) })
	return leases, nil
}

// writeFile writes data to path atomically (a temporary file renamed).
func writeFile(path string, data []byte) error {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, data, 0o666); err != nil {
		return fmt.Errorf("ports: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("ports: %w", err)
	}
	return nil
}

// Lock takes an exclusive flock on path (created if missing), waiting
// until ctx ends, and returns the function that releases it. The lock is
// released by the kernel if the process dies.
func Lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o666)
	if err != nil {
		return nil, fmt.Errorf("ports: lock: %w", err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("ports: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("ports: waiting for lock %s: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
}
