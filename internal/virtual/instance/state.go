package instance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/clustersync/clustersync/internal/proc"
)

// State is what instance.json records about a virtual cluster.
type State struct {
	Name          string `json:"name"`
	HostNamespace string `json:"hostNamespace"`
	// HostKubeconfig is the absolute path of the host cluster's kubeconfig.
	HostKubeconfig string `json:"hostKubeconfig"`
	// ServiceCIDR is the host's (and so the virtual cluster's) service range.
	ServiceCIDR string `json:"serviceCIDR"`
	// CreatedNamespace is true when clustersync created the host namespace,
	// so that delete removes it too.
	CreatedNamespace bool      `json:"createdNamespace"`
	Created          time.Time `json:"created"`
}

// Status is what the running supervisor writes to serve.json.
type Status struct {
	PID        int    `json:"pid"`
	SyncerPID  int    `json:"syncerPID"`
	APIServer  string `json:"apiServer"`
	HealthAddr string `json:"healthAddr"`
	Ready      bool   `json:"ready"`
}

// Instance is one virtual cluster's state folder.
type Instance struct {
	Dir string
	State
}

// Home is the folder holding clustersync's local state: $CLUSTERSYNC_HOME,
// else ~/.clustersync.
func Home() string {
	if h := os.Getenv("CLUSTERSYNC_HOME"); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "clustersync")
	}
	return filepath.Join(home, ".clustersync")
}

// ValidateName checks that name can name a virtual cluster: a DNS label
// (it becomes part of host names and the host Service name).
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("virtual cluster name %q: %s", name, errs[0])
	}
	return nil
}

// Path is the state folder of virtual cluster name under home.
func Path(home, name string) string { return filepath.Join(home, "virtual", name) }

// Load reads the instance name under home.
func Load(home, name string) (*Instance, error) {
	dir := Path(home, name)
	data, err := os.ReadFile(filepath.Join(dir, "instance.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("virtual cluster %q not found (no %s); `clustersync virtual list` shows the existing ones", name, dir)
	}
	if err != nil {
		return nil, err
	}
	i := &Instance{Dir: dir}
	if err := json.Unmarshal(data, &i.State); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "instance.json"), err)
	}
	return i, nil
}

// List reads every instance under home, sorted by name.
func List(home string) ([]*Instance, error) {
	entries, err := os.ReadDir(filepath.Join(home, "virtual"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Instance
	for _, e := range entries {
		if i, err := Load(home, e.Name()); err == nil {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

func (i *Instance) save() error {
	data, err := json.MarshalIndent(i.State, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(i.Dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(i.Dir, "instance.json"), data, 0o600)
}

// ConfigFile is the virtual cluster's configuration file.
func (i *Instance) ConfigFile() string { return filepath.Join(i.Dir, "config.yaml") }

// ControlPlaneDir is the control plane's state folder.
func (i *Instance) ControlPlaneDir() string { return filepath.Join(i.Dir, "controlplane") }

// Kubeconfig is the tenant's kubeconfig (cluster-admin of the virtual cluster).
func (i *Instance) Kubeconfig() string { return filepath.Join(i.ControlPlaneDir(), "kubeconfig.yaml") }

// Log is the log file of component name.
func (i *Instance) Log(name string) string { return filepath.Join(i.Dir, "logs", name+".log") }

func (i *Instance) statusFile() string { return filepath.Join(i.Dir, "serve.json") }

// Status reads serve.json; ok is false when the supervisor is not running.
func (i *Instance) Status() (st Status, ok bool) {
	data, err := os.ReadFile(i.statusFile())
	if err != nil || json.Unmarshal(data, &st) != nil {
		return st, false
	}
	return st, proc.Alive(st.PID)
}

func (i *Instance) writeStatus(st Status) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := i.statusFile() + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, i.statusFile())
}
