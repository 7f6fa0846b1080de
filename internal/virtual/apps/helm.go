package apps

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// helmClient installs the charts of experimental.deploy.vcluster.helm in
// one cluster with Helm's Go SDK, releases stored as Secrets (Helm's
// default), charts fetched into cacheDir.
type helmClient struct {
	cfg      *rest.Config
	cacheDir string
	log      func(format string, v ...any)
}

// restGetter is Helm's view of the cluster of a rest.Config, in one
// namespace.
type restGetter struct {
	cfg       *rest.Config
	namespace string
}

// ToRESTConfig returns a copy of the config.
func (g restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

// ToDiscoveryClient returns a discovery client cached in memory.
func (g restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(g.cfg)
	if err != nil {
		return nil, err
	}
	return memory.NewMemCacheClient(dc), nil
}

// ToRESTMapper returns a mapper that discovers kinds as they are asked for.
func (g restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	dc, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(dc), nil
}

// ToRawKubeConfigLoader gives Helm the namespace; the connection comes from
// ToRESTConfig.
func (g restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}

// action is Helm's configuration for releases in namespace.
func (h *helmClient) action(namespace string) (*action.Configuration, error) {
	cfg := new(action.Configuration)
	if err := cfg.Init(restGetter{cfg: h.cfg, namespace: namespace}, namespace, "secret", h.log); err != nil {
		return nil, err
	}
	return cfg, nil
}

// settings are Helm's settings with every file below cacheDir (nothing of
// the environment's Helm configuration is read).
func (h *helmClient) settings() *cli.EnvSettings {
	s := cli.New()
	s.RepositoryCache = filepath.Join(h.cacheDir, "repository")
	s.RepositoryConfig = filepath.Join(h.cacheDir, "repositories.yaml")
	s.RegistryConfig = filepath.Join(h.cacheDir, "registry.json")
	return s
}

// load fetches and loads the chart of entry e: its bundle, else chart.name
// from chart.repo (an OCI registry path, oci://HOST/PATH, to which the
// name is appended as vCluster does, or a chart repository URL) at
// chart.version.
func (h *helmClient) load(cfg *action.Configuration, e config.DeployHelm) (*chart.Chart, error) {
	if e.Bundle != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Bundle)
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		return loader.LoadArchive(bytes.NewReader(raw))
	}
	c := e.Chart
	settings := h.settings()
	opts := []registry.ClientOption{registry.ClientOptCredentialsFile(settings.RegistryConfig)}
	if c.Insecure {
		opts = append(opts, registry.ClientOptPlainHTTP(),
			registry.ClientOptHTTPClient(&http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment,
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}})) //nolint:gosec // the user asked for it (chart.insecure)
	}
	if c.Username != "" || c.Password != "" {
		opts = append(opts, registry.ClientOptBasicAuth(c.Username, c.Password))
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	cfg.RegistryClient = rc
	in := action.NewInstall(cfg)
	in.Version, in.Username, in.Password = c.Version, c.Username, c.Password
	in.InsecureSkipTLSverify, in.PlainHTTP = c.Insecure, c.Insecure && registry.IsOCI(c.Repo)
	ref := c.Name
	if registry.IsOCI(c.Repo) {
		ref = strings.TrimSuffix(c.Repo, "/") + "/" + c.Name
	} else {
		in.RepoURL = c.Repo
	}
	path, err := in.LocateChart(ref, settings)
	if err != nil {
		return nil, err
	}
	return loader.Load(path)
}

// deploy installs entry e, or upgrades its release when it exists and e
// changed since (changed), and returns the chart's name-version; the chart
// is fetched only when there is something to install. A failed
// install is uninstalled and a failed upgrade rolled back (as vCluster
// does), so the next try starts from a settled release. The error's reason
// is one of ReasonChartPull, ReasonInstall, ReasonUpgrade.
func (h *helmClient) deploy(ctx context.Context, e config.DeployHelm, changed bool) (string, string, error) {
	name, ns := e.ReleaseName(), e.ReleaseNamespace()
	cfg, err := h.action(ns)
	if err != nil {
		return "", ReasonInstall, err
	}
	last, err := action.NewStatus(cfg).Run(name)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		last = nil
	case err != nil:
		return "", ReasonInstall, err
	case last.Info.Status == release.StatusDeployed && !changed:
		// Nothing to fetch: the release is what the entry asks for.
		return last.Chart.Name() + "-" + last.Chart.Metadata.Version, "", nil
	}
	ch, err := h.load(cfg, e)
	if err != nil {
		return "", ReasonChartPull, err
	}
	id := ch.Name() + "-" + ch.Metadata.Version
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(e.Values), &vals); err != nil {
		return id, ReasonInstall, fmt.Errorf("values: %w", err)
	}
	switch {
	case last == nil: // no release yet
	case last.Info.Status.IsPending() || (last.Version == 1 && last.Info.Status == release.StatusFailed):
		// Left by a syncer stopped in the middle, or a first install that
		// failed: start over.
		if _, err := action.NewUninstall(cfg).Run(name); err != nil {
			return id, ReasonUninstall, err
		}
	default:
		up := action.NewUpgrade(cfg)
		up.Namespace, up.Timeout = ns, e.TimeoutDuration()
		if _, err := up.RunWithContext(ctx, name, ch, vals); err != nil {
			if _, rbErr := action.NewStatus(cfg).Run(name); rbErr == nil {
				rb := action.NewRollback(cfg)
				rb.Timeout = e.TimeoutDuration()
				if rbErr := rb.Run(name); rbErr != nil {
					err = fmt.Errorf("%w; rolling back: %v", err, rbErr)
				}
			}
			return id, ReasonUpgrade, err
		}
		return id, "", nil
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace, in.Timeout = name, ns, true, e.TimeoutDuration()
	if _, err := in.RunWithContext(ctx, ch, vals); err != nil {
		if _, stErr := action.NewStatus(cfg).Run(name); stErr == nil {
			if _, unErr := action.NewUninstall(cfg).Run(name); unErr != nil {
				err = fmt.Errorf("%w; uninstalling the failed release: %v", err, unErr)
			}
		}
		return id, ReasonInstall, err
	}
	return id, "", nil
}

// uninstall removes release namespace/name, dropped from the charts; a
// release already gone is no error.
func (h *helmClient) uninstall(namespace, name string) error {
	cfg, err := h.action(namespace)
	if err != nil {
		return err
	}
	if _, err := action.NewUninstall(cfg).Run(name); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return err
	}
	return nil
}

// entryHash identifies entry e of the charts: a change of any of its keys
// upgrades the release.
func entryHash(e config.DeployHelm) string {
	raw, _ := json.Marshal(e)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

// status returns release namespace/name's last revision.
func (h *helmClient) status(namespace, name string) (*release.Release, error) {
	cfg, err := h.action(namespace)
	if err != nil {
		return nil, err
	}
	return action.NewStatus(cfg).Run(name)
}
