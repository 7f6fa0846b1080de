// Package kube holds small client helpers shared by clustersync's commands:
// applying multi-document YAML with server-side apply.
package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// DecodeYAML splits a multi-document YAML stream into objects; empty
// documents are skipped. Errors name the document's position (1-based).
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for n := 1; ; n++ {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", n)
		}
		out = append(out, u)
	}
}

// Applier applies objects with server-side apply, as one field manager.
type Applier struct {
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	manager string
}

// NewApplier returns an Applier for the API server of cfg.
func NewApplier(cfg *rest.Config, fieldManager string) (*Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return &Applier{dyn: dyn, mapper: mapper, manager: fieldManager}, nil
}

// Apply applies each object in order, taking ownership of conflicting fields.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
		data, err := u.MarshalJSON()
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := u.GetNamespace()
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			ri = a.dyn.Resource(m.Resource).Namespace(ns)
		}
		force := true
		if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: a.manager, Force: &force}); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
		}
	}
	return nil
}
