package hostcluster

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// state is Dir/host.json.
type state struct {
	Name        string `json:"name"`
	ServiceCIDR string `json:"serviceCIDR"`
	Nodes       int    `json:"nodes"`
	// Kwokctl is the kwokctl binary the cluster was created with, so that
	// Open stops and deletes it with the same one.
	Kwokctl string `json:"kwokctl,omitempty"`
}

func (c *Cluster) statePath() string { return filepath.Join(c.Dir, "host.json") }

// readState reads dir/host.json; a missing file gives an error wrapping
// fs.ErrNotExist.
func readState(dir string) (state, error) {
	var st state
	path := filepath.Join(dir, "host.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return st, fmt.Errorf("hostcluster: no host cluster in %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("hostcluster: %s: %w", path, err)
	}
	if st.Name == "" || st.ServiceCIDR == "" {
		return st, fmt.Errorf("hostcluster: %s: name or serviceCIDR missing", path)
	}
	return st, nil
}

// saveState writes Dir/host.json atomically.
func (c *Cluster) saveState() error {
	data, err := json.MarshalIndent(state{Name: c.Name, ServiceCIDR: c.ServiceCIDR, Nodes: c.Nodes, Kwokctl: c.kwokctl}, "", "  ")
	if err != nil {
		return err
	}
	tmp := c.statePath() + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("hostcluster: %w", err)
	}
	if err := os.Rename(tmp, c.statePath()); err != nil {
		return fmt.Errorf("hostcluster: %w", err)
	}
	return nil
}

func (c *Cluster) kwokctlConfigPath() string { return filepath.Join(c.Dir, "kwokctl.yaml") }

// kwokctlConfig is Dir/kwokctl.yaml, with the components' ports p. Every
// component listens on 127.0.0.1
// (kwokctl's default, 0.0.0.0, would expose etcd's unauthenticated client
// port to the network); kube-apiserver alone is then given 0.0.0.0 in
// realNodeExtraArgs. Its serving certificate also covers the first address
// of the Service range, the "kubernetes" Service's cluster IP, which pods
// call their API server at.
func (c *Cluster) kwokctlConfig(p componentPorts) (string, error) {
	prefix, err := netip.ParsePrefix(c.ServiceCIDR)
	if err != nil {
		return "", fmt.Errorf("hostcluster: service CIDR: %w", err)
	}
	return fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  bindAddress: 127.0.0.1
  kubeApiserverCertSANs: [%q]
%s`, prefix.Masked().Addr().Next(), p.yaml()), nil
}

// writeKwokctlConfig writes Dir/kwokctl.yaml, passed to kwokctl create with -c.
func (c *Cluster) writeKwokctlConfig(p componentPorts) error {
	cfg, err := c.kwokctlConfig(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.kwokctlConfigPath(), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("hostcluster: %w", err)
	}
	return nil
}
