package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// recorder keeps, from watches of both sides, the history of every object
// of the four kinds (identity, resource version and the keys that tell an
// incarnation and a generation apart), so that a failed run can show how
// an object it reports came to be as it is.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	log   map[string][]string // "side kind ns/name" → lines
}

func newRecorder() *recorder {
	return &recorder{start: time.Now(), log: map[string][]string{}}
}

// watch records the objects of the four kinds that cfg reaches, in
// namespace ns ("" for all), as side, until ctx ends.
func (r *recorder) watch(ctx context.Context, cfg *rest.Config, side, ns string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	for _, inf := range []cache.SharedIndexInformer{f.Core().V1().Pods().Informer(), f.Core().V1().Services().Informer(),
		f.Core().V1().Secrets().Informer(), f.Core().V1().ConfigMaps().Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.note(side, "add", o) },
			UpdateFunc: func(_, o any) { r.note(side, "update", o) },
			DeleteFunc: func(o any) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				r.note(side, "delete", o)
			},
		}); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	return nil
}

func (r *recorder) note(side, verb string, o any) {
	obj, ok := o.(client.Object)
	if !ok {
		return
	}
	kind := "?"
	switch obj.(type) {
	case *corev1.Pod:
		kind = "Pod"
	case *corev1.Service:
		kind = "Service"
	case *corev1.Secret:
		kind = "Secret"
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	}
	a, l := obj.GetAnnotations(), obj.GetLabels()
	line := fmt.Sprintf("%7.2fs %-6s uid=%s rv=%s inc=%s gen=%s note=%s", time.Since(r.start).Seconds(), verb, shortUID(string(obj.GetUID())),
		obj.GetResourceVersion(), a[annIncarnation], l[labelGen], a[annNote])
	if u := a[translate.AnnotationObjectUID]; u != "" {
		line += " object-uid=" + shortUID(u)
	}
	if s, ok := obj.(*corev1.Service); ok {
		line += " ip=" + s.Spec.ClusterIP
	}
	if p, ok := obj.(*corev1.Pod); ok {
		line += fmt.Sprintf(" node=%q phase=%s", p.Spec.NodeName, p.Status.Phase)
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		line += fmt.Sprintf(" finalizers=%v", f)
	}
	if obj.GetDeletionTimestamp() != nil {
		line += " deleting"
		if g := obj.GetDeletionGracePeriodSeconds(); g != nil {
			line += fmt.Sprintf(" grace=%ds", *g)
		}
	}
	k := side + " " + kind + " " + obj.GetNamespace() + "/" + obj.GetName()
	r.mu.Lock()
	r.log[k] = append(r.log[k], line)
	r.mu.Unlock()
}

func shortUID(u string) string {
	if len(u) > 8 {
		return u[:8]
	}
	return u
}

// history is what the watches saw of virtual object k and of its host
// copy hostName.
func (r *recorder) history(k key, hostName string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, s := range []string{"virtual " + k.kind.String() + " " + k.ns + "/" + k.name, "host " + k.kind.String() + " " + hostNamespace + "/" + hostName} {
		fmt.Fprintf(&b, "  %s:\n", s)
		for _, l := range r.log[s] {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	return b.String()
}
