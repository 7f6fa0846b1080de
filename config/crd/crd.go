// Package crd holds clustersync's CustomResourceDefinitions, generated from
// the Go types in api/ by `make generate` (controller-gen), embedded in the
// binary, and installs them in a cluster.
package crd

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// FieldManager is the server-side apply field manager Install uses.
const FieldManager = "clustersync"

// DefaultTimeout bounds Install when its context has no deadline: the time
// to apply the CRDs and see them established and served.
const DefaultTimeout = time.Minute

//go:embed *.yaml
var files embed.FS

// crdFile is one embedded CRD: its decoded form and its JSON, which is what
// Install applies (the decoded form would add an empty status and a null
// creationTimestamp).
type crdFile struct {
	crd  *apiextensionsv1.CustomResourceDefinition
	json []byte
}

func load() ([]crdFile, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]crdFile, 0, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
			return nil, fmt.Errorf("%s: not a named CustomResourceDefinition", name)
		}
		out = append(out, crdFile{crd: crd, json: j})
	}
	return out, nil
}

// CRDs returns clustersync's CustomResourceDefinitions, a new copy on each
// call, ordered by file name (eks.clustersync.io before
// management.clustersync.io).
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	fl, err := load()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(fl))
	for i, f := range fl {
		out[i] = f.crd
	}
	return out, nil
}

// Install creates or updates clustersync's CRDs in the cluster of cfg with
// server-side apply (field manager FieldManager, forcing conflicts: the CRDs
// are clustersync's), then waits until each is Established and its resource
// is served (listed by discovery), so that clients can use it on return.
// Running it again is a no-op for unchanged CRDs. Without a deadline in ctx,
// it gives up after DefaultTimeout.
func Install(ctx context.Context, cfg *rest.Config) error {
	fl, err := load()
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	force := true
	for _, f := range fl {
		if _, err := crds.Patch(ctx, f.crd.Name, types.ApplyPatchType, f.json,
			metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", f.crd.Name, err)
		}
	}
	for _, f := range fl {
		if err := waitEstablished(ctx, cs, f.crd.Name); err != nil {
			return err
		}
		if err := waitServed(ctx, dc, f.crd); err != nil {
			return err
		}
	}
	return nil
}

const pollInterval = 100 * time.Millisecond

// waitEstablished polls the CRD until its Established condition is True. A
// NamesAccepted=False condition (a name clash with another CRD) fails at
// once with the API server's message.
func waitEstablished(ctx context.Context, cs apiextensionsclient.Interface, name string) error {
	var last *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil // transient; the deadline ends the wait
		}
		last = crd
		if c := apihelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted); c != nil && c.Status == apiextensionsv1.ConditionFalse {
			return false, fmt.Errorf("CRD %s: names not accepted: %s", name, c.Message)
		}
		return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established), nil
	})
	if err != nil && ctx.Err() != nil {
		msg := "never read"
		if last != nil {
			msg = fmt.Sprintf("conditions %v", last.Status.Conditions)
		}
		return fmt.Errorf("CRD %s not established (%s): %w", name, msg, err)
	}
	return err
}

// waitServed polls discovery until every served version of the CRD lists
// its resource.
func waitServed(ctx context.Context, dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(context.Context) (bool, error) {
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				return false, nil // not yet in discovery
			}
			for _, r := range list.APIResources {
				if r.Name == crd.Spec.Names.Plural {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s: %s %s not served: %w", crd.Name, gv, crd.Spec.Names.Plural, err)
		}
	}
	return nil
}
