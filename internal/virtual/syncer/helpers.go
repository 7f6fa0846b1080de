package syncer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// DeepCopy copies a typed object.
func DeepCopy[T client.Object](o T) T { return o.DeepCopyObject().(T) }

// HostMeta is the ObjectMeta of a new host object for c: in the host
// namespace, or cluster-scoped when the virtual object is.
func HostMeta[T client.Object](s *Context, c *Create[T]) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: c.HostName, Labels: c.Labels, Annotations: c.Annotations}
	if c.Ref.Namespace != "" {
		m.Namespace = s.Translator.HostNamespace
	}
	return m
}

// ApplyMeta returns copies of both objects of p carrying the merged labels
// and annotations; a resource changes them further and patches both.
func ApplyMeta[T client.Object](p *Pair[T]) (virtual, host T) {
	virtual, host = DeepCopy(p.Virtual), DeepCopy(p.Host)
	virtual.SetLabels(p.Meta.VirtualLabels)
	virtual.SetAnnotations(p.Meta.VirtualAnnotations)
	host.SetLabels(p.Meta.HostLabels)
	host.SetAnnotations(p.Meta.HostAnnotations)
	return virtual, host
}

// SelectedForSync is vCluster's selective sync rule for Secrets and
// ConfigMaps (https://github.com/loft-sh/vcluster/blob/main/pkg/controllers/resources/secrets/syncer.go):
// the object goes to the
// host when cfg.All is set, when it is annotated
// vcluster.loft.sh/force-sync=true, or while a synced object references it.
func (s *Context) SelectedForSync(cfg config.SelectiveSync, kind string, v client.Object) bool {
	if cfg.All || v.GetAnnotations()[translate.AnnotationForceSync] == "true" {
		return true
	}
	return s.Mappings.IsReferenced(mapping.Ref{Kind: kind, Namespace: v.GetNamespace(), Name: v.GetName()})
}
