package hostcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/ports"
)

// componentPorts are the TCP ports of a cluster's components, in kwokctl's
// option names (the options of Dir/kwokctl.yaml and of kwokctl's own
// kwok.yaml). They are leased from the machine's port registry (package
// ports) to the cluster's state folder when it is created, and stay its
// own until it is deleted, also while it is stopped: kwokctl's own choice
// (the first ports from 32767 down that nothing listens on at that moment)
// would hand a stopped cluster's ports, or those of an API server between
// a kill and its restart, to the next cluster created on the machine.
type componentPorts struct {
	EtcdPeer              int `json:"etcdPeerPort,omitempty"`
	Etcd                  int `json:"etcdPort,omitempty"`
	KubeAPIServer         int `json:"kubeApiserverPort,omitempty"`
	KwokController        int `json:"kwokControllerPort,omitempty"`
	KubeControllerManager int `json:"kubeControllerManagerPort,omitempty"`
	KubeScheduler         int `json:"kubeSchedulerPort,omitempty"`
}

// numPorts is how many ports a cluster leases.
const numPorts = 6

// fromList assigns ports (numPorts of them) in the field order.
func fromList(ps []int) componentPorts {
	return componentPorts{EtcdPeer: ps[0], Etcd: ps[1], KubeAPIServer: ps[2], KwokController: ps[3], KubeControllerManager: ps[4], KubeScheduler: ps[5]}
}

// of returns the ports component listens on, by kwokctl's component name.
func (p componentPorts) of(component string) []int {
	var ps []int
	switch component {
	case "etcd":
		ps = []int{p.Etcd, p.EtcdPeer}
	case "kube-apiserver":
		ps = []int{p.KubeAPIServer}
	case "kube-controller-manager":
		ps = []int{p.KubeControllerManager}
	case "kube-scheduler":
		ps = []int{p.KubeScheduler}
	case "kwok-controller":
		ps = []int{p.KwokController}
	}
	return slices.DeleteFunc(ps, func(n int) bool { return n == 0 })
}

// all returns every port that is set.
func (p componentPorts) all() []int {
	var ps []int
	for _, name := range components() {
		ps = append(ps, p.of(name)...)
	}
	return ps
}

// yaml is the ports as lines of kwokctl.yaml's options: (two spaces in).
func (p componentPorts) yaml() string {
	data, _ := yaml.Marshal(p)
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		b.WriteString("  " + line)
	}
	return b.String()
}

// kwokPorts reads the ports kwokctl gave the cluster from its kwok.yaml
// (every KwokctlConfiguration document's options; the last one set wins).
func kwokPorts(data []byte) (componentPorts, error) {
	var p componentPorts
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		var d struct {
			Kind    string          `json:"kind"`
			Options *componentPorts `json:"options"`
		}
		if err := yaml.Unmarshal(doc, &d); err != nil {
			return p, err
		}
		if d.Kind == "KwokctlConfiguration" && d.Options != nil {
			p = *d.Options
		}
	}
	return p, nil
}

// reservePorts leases numPorts ports to the new cluster's state folder.
func (c *Cluster) reservePorts(ctx context.Context) (componentPorts, error) {
	ps, err := c.ports.Reserve(ctx, c.Dir, numPorts)
	if err != nil {
		return componentPorts{}, fmt.Errorf("hostcluster: ports of host cluster %q: %w", c.Name, err)
	}
	return fromList(ps), nil
}

// componentPorts returns the ports kwokctl keeps for the created cluster
// (zero when it was never created).
func (c *Cluster) componentPorts() (componentPorts, error) {
	data, err := os.ReadFile(filepath.Join(c.KwokDir(), "kwok.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return componentPorts{}, nil
	}
	if err != nil {
		return componentPorts{}, fmt.Errorf("hostcluster: %w", err)
	}
	p, err := kwokPorts(data)
	if err != nil {
		return p, fmt.Errorf("hostcluster: %s: %w", filepath.Join(c.KwokDir(), "kwok.yaml"), err)
	}
	return p, nil
}

// Ports returns the TCP ports the cluster's components listen on (etcd's
// two, kube-apiserver's, kwok-controller's, kube-controller-manager's and
// kube-scheduler's), leased to Dir from the port registry; none for a
// cluster that was never created.
func (c *Cluster) Ports() ([]int, error) {
	p, err := c.componentPorts()
	return p.all(), err
}

// holdPorts records the created cluster's ports as its own in the port
// registry, again: after the temporary folder was emptied (a reboot), or
// for a cluster created before the registry; an error names a cluster that
// holds one of them.
func (c *Cluster) holdPorts(ctx context.Context) error {
	p, err := c.componentPorts()
	if err != nil {
		return err
	}
	if err := c.ports.Hold(ctx, c.Dir, p.all()); err != nil {
		return fmt.Errorf("hostcluster: host cluster %q: %w", c.Name, err)
	}
	return nil
}

// waitPortsReleased waits until the ports of every component that does not
// run can be bound, before kwokctl starts them: a component that was just
// killed or stopped releases its ports only once all its threads have
// exited (ports.WaitReleased). A port another live process listens on is
// an error naming that process.
func (c *Cluster) waitPortsReleased(ctx context.Context) error {
	p, err := c.componentPorts()
	if err != nil {
		return err
	}
	for _, name := range components() {
		pid := c.pid(name)
		if alive(pid) {
			continue
		}
		for _, port := range p.of(name) {
			if err := ports.WaitReleased(ctx, port, pid); err != nil {
				return fmt.Errorf("hostcluster: %s of host cluster %q cannot start: %w", name, c.Name, err)
			}
		}
	}
	return nil
}

// portsInUse explains each "address already in use" of lines: who holds
// the port now, and which state folder leases it.
func (c *Cluster) portsInUse(lines []string) []string {
	return c.ports.ExplainInUse(strings.Join(lines, "\n"))
}
