package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Helm runs Helm actions against one host cluster.
type Helm struct {
	kubeconfig string
	log        io.Writer
}

// NewHelm returns Helm for the host of kubeconfig (a file path); Helm's
// debug lines go to log (nil discards them).
func NewHelm(kubeconfig string, log io.Writer) *Helm {
	if log == nil {
		log = io.Discard
	}
	return &Helm{kubeconfig: kubeconfig, log: log}
}

// config is an action configuration for namespace ("" = every namespace,
// for List), storing releases as Secrets, as Helm does by default.
func (h *Helm) config(namespace string) (*action.Configuration, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &h.kubeconfig
	flags.Namespace = &namespace
	cfg := new(action.Configuration)
	err := cfg.Init(flags, namespace, "secret", func(format string, v ...any) { fmt.Fprintf(h.log, format+"\n", v...) })
	if err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return cfg, nil
}

// chartIn is the embedded chart and Helm's configuration for namespace.
func (h *Helm) chartIn(namespace string) (*chart.Chart, *action.Configuration, error) {
	c, err := Chart()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := h.config(namespace)
	return c, cfg, err
}

// Install installs the virtual-cluster chart as release name into host
// namespace (which must exist) with vals (see Values). It returns once the
// objects are created; WaitReady waits for the control plane.
func (h *Helm) Install(ctx context.Context, name, namespace string, vals map[string]any) (*release.Release, error) {
	c, err := Chart()
	if err != nil {
		return nil, err
	}
	return h.InstallChart(ctx, c, name, namespace, vals)
}

// InstallChart installs chart c as release name into host namespace
// (which must exist) with vals, as `helm install` does, and returns once
// the objects are created. The benches install vCluster's own chart with
// it.
func (h *Helm) InstallChart(ctx context.Context, c *chart.Chart, name, namespace string, vals map[string]any) (*release.Release, error) {
	cfg, err := h.config(namespace)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = name, namespace
	in.Timeout = 5 * time.Minute
	rel, err := in.RunWithContext(ctx, c, vals)
	if err != nil {
		return nil, fmt.Errorf("helm install %s -n %s: %w", name, namespace, err)
	}
	return rel, nil
}

// Upgrade upgrades release name of host namespace to the embedded chart
// with vals (see Values): vals replace the release's values entirely (the
// chart's defaults for what they leave out), as `helm upgrade` without
// --reuse-values does. It returns once the objects are updated; the
// control plane pod is replaced since its config checksum changes.
func (h *Helm) Upgrade(ctx context.Context, name, namespace string, vals map[string]any) (*release.Release, error) {
	c, cfg, err := h.chartIn(namespace)
	if err != nil {
		return nil, err
	}
	up := action.NewUpgrade(cfg)
	up.Namespace, up.ResetValues = namespace, true
	up.Timeout = 5 * time.Minute
	rel, err := up.RunWithContext(ctx, name, c, vals)
	if err != nil {
		return nil, fmt.Errorf("helm upgrade %s -n %s: %w", name, namespace, err)
	}
	return rel, nil
}

// Uninstall removes release name from namespace and waits (up to timeout)
// until the objects it created are gone. A release that does not exist is
// an error that says so.
func (h *Helm) Uninstall(name, namespace string, timeout time.Duration) error {
	cfg, err := h.config(namespace)
	if err != nil {
		return err
	}
	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout = true, timeout
	if _, err := un.Run(name); err != nil {
		return fmt.Errorf("helm uninstall %s -n %s: %w", name, namespace, err)
	}
	return nil
}

// Get returns release name of namespace, or an error naming it when there
// is none ("virtual cluster "NAME" not found in host namespace NS") or it is
// not a virtual cluster.
func (h *Helm) Get(name, namespace string) (*release.Release, error) {
	cfg, err := h.config(namespace)
	if err != nil {
		return nil, err
	}
	rel, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("virtual cluster %q not found in host namespace %s", name, namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("virtual cluster %q in host namespace %s: %w", name, namespace, err)
	}
	if rel.Chart == nil || rel.Chart.Metadata == nil || rel.Chart.Metadata.Name != ChartName {
		return nil, fmt.Errorf("helm release %s in host namespace %s is not a virtual cluster (chart %s)", name, namespace, chartName(rel))
	}
	return rel, nil
}

// List returns the releases of the virtual-cluster chart in namespace, or
// in every namespace when namespace is "", sorted by namespace and name.
func (h *Helm) List(namespace string) ([]*release.Release, error) {
	cfg, err := h.config(namespace)
	if err != nil {
		return nil, err
	}
	l := action.NewList(cfg)
	l.AllNamespaces = namespace == ""
	l.All = true
	rels, err := l.Run()
	if err != nil {
		return nil, fmt.Errorf("helm list: %w", err)
	}
	rels = slices.DeleteFunc(rels, func(r *release.Release) bool { return chartName(r) != ChartName })
	slices.SortFunc(rels, func(a, b *release.Release) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return rels, nil
}

func chartName(r *release.Release) string {
	if r.Chart == nil || r.Chart.Metadata == nil {
		return ""
	}
	return r.Chart.Metadata.Name
}
