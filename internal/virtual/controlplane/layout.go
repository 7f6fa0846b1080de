package controlplane

import "path/filepath"

// Layout names every file of a control plane's state folder.
type Layout struct{ Dir string }

// PKI is the certificate folder.
func (l Layout) PKI(name string) string { return filepath.Join(l.Dir, "pki", name) }

// Log is the log file of component name.
func (l Layout) Log(name string) string { return filepath.Join(l.Dir, "logs", name+".log") }

// EtcdData is the embedded etcd's data folder.
func (l Layout) EtcdData() string { return filepath.Join(l.Dir, "etcd") }

// AdminKubeconfig is the tenant's (cluster-admin) kubeconfig.
func (l Layout) AdminKubeconfig() string { return filepath.Join(l.Dir, "kubeconfig.yaml") }

// ControllerManagerKubeconfig is kube-controller-manager's kubeconfig.
func (l Layout) ControllerManagerKubeconfig() string {
	return filepath.Join(l.Dir, "pki", "controller-manager.kubeconfig")
}

// SchedulerKubeconfig is kube-scheduler's kubeconfig.
func (l Layout) SchedulerKubeconfig() string {
	return filepath.Join(l.Dir, "pki", "scheduler.kubeconfig")
}

// Ports is the JSON file recording the ports chosen at first start.
func (l Layout) Ports() string { return filepath.Join(l.Dir, "ports.json") }
