package gatewayapi

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// Imports are the copies of host Gateways (sync.fromHost.gateways) the
// tenant's routes may name as parents: their mappings and settings.
type Imports struct {
	Mappings fromhost.Mappings
	Config   config.FromHostGateways
}

// cacheLookup is the Lookup of one sync, on the virtual cluster's cache. A
// read error other than not found is kept in err, and the sync that asked
// returns it rather than decide on what it could not read.
type cacheLookup struct {
	ctx     context.Context
	c       client.Reader
	imports *Imports
	err     error
}

func (l *cacheLookup) keep(err error) {
	if err != nil && !apierrors.IsNotFound(err) && l.err == nil {
		l.err = err
	}
}

// Gateway implements Lookup.
func (l *cacheLookup) Gateway(key types.NamespacedName) (*gatewayv1.Gateway, bool) {
	var g gatewayv1.Gateway
	if err := l.c.Get(l.ctx, key, &g); err != nil {
		l.keep(err)
		return nil, false
	}
	return &g, true
}

// Imported implements Lookup: a virtual Gateway labelled
// LabelImportedGateway by the copy controller whose key a mapping names.
func (l *cacheLookup) Imported(key types.NamespacedName) (Imported, bool) {
	if l.imports == nil {
		return Imported{}, false
	}
	g, ok := l.Gateway(key)
	if !ok || g.Labels[LabelImportedGateway] != "true" || g.Labels[fromhost.Label] != "true" {
		return Imported{}, false
	}
	h, ok := l.imports.Mappings.Host(key)
	if !ok {
		return Imported{}, false
	}
	return Imported{Host: h, AllowedHostnames: AllowedHostnames(l.imports.Config, h)}, true
}

// NamespaceLabels implements Lookup.
func (l *cacheLookup) NamespaceLabels(ns string) map[string]string {
	var n corev1.Namespace
	if err := l.c.Get(l.ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		l.keep(err)
		return nil
	}
	return n.Labels
}

// Grants implements Lookup.
func (l *cacheLookup) Grants(ns string) []gatewayv1.ReferenceGrant {
	var list gatewayv1.ReferenceGrantList
	if err := l.c.List(l.ctx, &list, client.InNamespace(ns)); err != nil {
		l.keep(err)
		return nil
	}
	return list.Items
}

// decide turns the outcome of a check into ShouldSync's answer: a
// NotPermitted is reported on v (a Warning event ReasonNotPermitted, once
// per message) and not synced; a read error syncs, so that the sync
// itself returns the error and is retried.
func decide(s *syncer.Context, v client.Object, err error) bool {
	var np *NotPermitted
	if errors.As(err, &np) {
		s.ReportWarning(v, ReasonNotPermitted, "not synced to the host: %s", np.Message)
		return false
	}
	return true
}
