// Package inspect lists the objects of a virtual namespace next to their host
// copies, for people: `clustersync demo` prints it, so a newcomer sees what
// the syncer did with each object.
package inspect

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	podrefs "github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Row is one virtual object and what became of it on the host.
type Row struct {
	Kind, Virtual, Host, Status string
}

// Namespace returns a Row for each Pod, Service, ConfigMap, Secret and
// PersistentVolumeClaim of virtual namespace ns, in that order.
func Namespace(ctx context.Context, virtual, host client.Client, tr translate.Translator, ns string) ([]Row, error) {
	var rows []Row
	add := func(kind string, v client.Object, hostObj client.Object, status func() string) error {
		key := client.ObjectKey{Namespace: tr.HostNamespace, Name: tr.HostName(v.GetName(), ns)}
		err := host.Get(ctx, key, hostObj)
		switch {
		case apierrors.IsNotFound(err):
			rows = append(rows, Row{kind, ns + "/" + v.GetName(), "-", "not synced"})
		case err != nil:
			return err
		default:
			rows = append(rows, Row{kind, ns + "/" + v.GetName(), key.Namespace + "/" + key.Name, status()})
		}
		return nil
	}
	var pods corev1.PodList
	if err := virtual.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if err := add("Pod", p, &corev1.Pod{}, func() string { return fmt.Sprintf("%s on %s, IP %s", p.Status.Phase, p.Spec.NodeName, p.Status.PodIP) }); err != nil {
			return nil, err
		}
	}
	var svcs corev1.ServiceList
	if err := virtual.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		h := &corev1.Service{}
		if err := add("Service", s, h, func() string {
			return fmt.Sprintf("clusterIP %s (host %s)", s.Spec.ClusterIP, h.Spec.ClusterIP)
		}); err != nil {
			return nil, err
		}
	}
	used := map[mapping.Ref]bool{}
	for i := range pods.Items {
		for _, r := range podrefs.References(&pods.Items[i]) {
			used[r] = true
		}
	}
	// why says why a synced Secret or ConfigMap is on the host.
	why := func(kind string, o client.Object) func() string {
		return func() string {
			switch {
			case used[mapping.Ref{Kind: kind, Namespace: ns, Name: o.GetName()}]:
				return "synced (used by a pod)"
			case o.GetAnnotations()[translate.AnnotationForceSync] == "true":
				return "synced (force-sync)"
			}
			return "synced (all)"
		}
	}
	var cms corev1.ConfigMapList
	if err := virtual.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range cms.Items {
		if err := add("ConfigMap", &cms.Items[i], &corev1.ConfigMap{}, why("ConfigMap", &cms.Items[i])); err != nil {
			return nil, err
		}
	}
	var secrets corev1.SecretList
	if err := virtual.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		if err := add("Secret", &secrets.Items[i], &corev1.Secret{}, why("Secret", &secrets.Items[i])); err != nil {
			return nil, err
		}
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := virtual.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range pvcs.Items {
		c := &pvcs.Items[i]
		if err := add("PersistentVolumeClaim", c, &corev1.PersistentVolumeClaim{}, func() string { return string(c.Status.Phase) }); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// Print writes rows as an aligned table.
func Print(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tVIRTUAL OBJECT\tHOST OBJECT\tSTATUS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Kind, r.Virtual, r.Host, r.Status)
	}
	return tw.Flush()
}
