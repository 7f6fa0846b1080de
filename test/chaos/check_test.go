package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/resources/configmaps"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
	"github.com/clustersync/clustersync/internal/virtual/resources/secrets"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// planted is a host object of the test's own in the host namespace that
// the syncer must never touch: one whose name a virtual object's host
// name collides with, or one that looks like a copy but is not managed.
type planted struct {
	kind            kind
	name            string
	uid             string
	resourceVersion string
	// collidesWith is the virtual object whose host name it has, if any.
	collidesWith *key
}

// report is the outcome of one check.
type report struct {
	checked, missing, orphans, duplicates, mismatched, unmanagedTouched, virtualLost, notDeleted, churnErrors int
	collisions, collisionsReported                                                                            int
	serviceRecreations                                                                                        int
	problems                                                                                                  []string
	// keys are the virtual objects the problems are about (the first few).
	keys []key
	// known counts the differences that are known syncer bugs
	// (knownbugs_test.go), by bug.
	known map[string]int
}

// knownBug counts a difference that is known syncer bug bug.
func (r *report) knownBug(bug string, format string, args ...any) {
	if r.known == nil {
		r.known = map[string]int{}
	}
	r.known[bug]++
	r.add(new(int), "known bug %s: "+format, append([]any{bug}, args...)...)
}

func (r *report) add(count *int, format string, args ...any) {
	*count++
	if len(r.problems) < 40 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// about notes that a problem is about virtual object k.
func (r *report) about(k key) {
	if len(r.keys) < 10 && !slices.Contains(r.keys, k) {
		r.keys = append(r.keys, k)
	}
}

func (r *report) ok() bool {
	return r.missing == 0 && r.orphans == 0 && r.duplicates == 0 && r.mismatched == 0 && r.unmanagedTouched == 0 &&
		r.virtualLost == 0 && r.notDeleted == 0 && r.churnErrors == 0 && r.collisionsReported == r.collisions
}

func (r *report) counts() string {
	return fmt.Sprintf("checked=%d missing=%d orphans=%d duplicates=%d mismatched=%d unmanaged-touched=%d virtual-lost=%d not-deleted=%d churn-errors=%d collisions-reported=%d/%d",
		r.checked, r.missing, r.orphans, r.duplicates, r.mismatched, r.unmanagedTouched, r.virtualLost, r.notDeleted, r.churnErrors,
		r.collisionsReported, r.collisions)
}

// knownString lists the known bugs seen, "" when none.
func (r *report) knownString() string {
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(r.known)) {
		parts = append(parts, fmt.Sprintf("%s=%d", b, r.known[b]))
	}
	return strings.Join(parts, " ")
}

func (r *report) String() string {
	s := r.counts()
	for _, p := range r.problems {
		s += "\n  " + p
	}
	return s
}

// checker compares the host namespace with what the syncer's translation
// makes of the virtual objects, and the virtual objects with what the
// churn wrote.
type checker struct {
	virtual, host client.Client
	tr            translate.Translator
	namespaces    []string // the churn's
	planted       []planted
	// hostName is each kind's host name function, the syncer's own.
	hostName [numKinds]func(name, namespace string) string
}

func newChecker(virtual, host client.Client, tr translate.Translator, namespaces []string) *checker {
	c := &checker{virtual: virtual, host: host, tr: tr, namespaces: namespaces}
	c.hostName = [numKinds]func(string, string) string{
		pods.New(pods.Environment{Translator: tr}).HostName,
		services.New(tr, nil).HostName,
		secrets.New(tr, configAll).HostName,
		configmaps.New(tr, configAll).HostName,
	}
	return c
}

// gvkString is the kind as the host copies' object-kind annotation has it.
func gvkString(k kind) string { return corev1.SchemeGroupVersion.WithKind(k.String()).String() }

// lists lists the four kinds in c (namespace ns, or all when "").
func lists(ctx context.Context, c client.Client, ns string) ([numKinds][]client.Object, error) {
	var out [numKinds][]client.Object
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	var pl corev1.PodList
	var sl corev1.ServiceList
	var secl corev1.SecretList
	var cml corev1.ConfigMapList
	for _, l := range []client.ObjectList{&pl, &sl, &secl, &cml} {
		if err := c.List(ctx, l, opts...); err != nil {
			return out, err
		}
	}
	for i := range pl.Items {
		out[podKind] = append(out[podKind], &pl.Items[i])
	}
	for i := range sl.Items {
		out[serviceKind] = append(out[serviceKind], &sl.Items[i])
	}
	for i := range secl.Items {
		out[secretKind] = append(out[secretKind], &secl.Items[i])
	}
	for i := range cml.Items {
		out[configMapKind] = append(out[configMapKind], &cml.Items[i])
	}
	return out, nil
}

// synced tells whether the syncer syncs virtual object o of kind k (every
// Secret and ConfigMap: the virtual cluster has sync.toHost.*.all).
func synced(k kind, o client.Object) bool {
	return !(k == serviceKind && o.GetNamespace() == "default" && o.GetName() == "kubernetes")
}

// check runs once: every count it reports is 0 when the syncer has
// converged and lost nothing.
func (c *checker) check(ctx context.Context, state map[key]objState, hostValues map[key]map[string]bool, churnProblems map[string][]string) (*report, error) {
	r := &report{}
	virtualObjs, err := lists(ctx, c.virtual, "")
	if err != nil {
		return nil, fmt.Errorf("virtual: %w", err)
	}
	hostObjs, err := lists(ctx, c.host, hostNamespace)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	var namespaces corev1.NamespaceList
	if err := c.virtual.List(ctx, &namespaces); err != nil {
		return nil, fmt.Errorf("virtual: %w", err)
	}
	nsLabels := map[string]map[string]string{}
	for _, n := range namespaces.Items {
		nsLabels[n.Name] = n.Labels
	}

	// The planted host objects: unchanged.
	plantedNames := map[key]bool{}
	colliders := map[key]bool{}
	for _, p := range c.planted {
		plantedNames[key{kind: p.kind, name: p.name}] = true
		i := slices.IndexFunc(hostObjs[p.kind], func(o client.Object) bool { return o.GetName() == p.name })
		switch {
		case i < 0:
			r.add(&r.unmanagedTouched, "unmanaged host %s %s deleted", p.kind, p.name)
		case string(hostObjs[p.kind][i].GetUID()) != p.uid || hostObjs[p.kind][i].GetResourceVersion() != p.resourceVersion:
			r.add(&r.unmanagedTouched, "unmanaged host %s %s changed: resourceVersion %s, was %s", p.kind, p.name,
				hostObjs[p.kind][i].GetResourceVersion(), p.resourceVersion)
		}
		if p.collidesWith != nil {
			colliders[*p.collidesWith] = true
		}
	}

	for k := range numKinds {
		virtualByKey := map[key]client.Object{}
		for _, v := range virtualObjs[k] {
			virtualByKey[key{k, v.GetNamespace(), v.GetName()}] = v
		}
		// Host side: every object labelled as this virtual cluster's is a
		// well-formed copy (translate.IsManaged, the syncer's own test) of
		// a virtual object that exists, one copy per virtual object.
		copies := map[key][]client.Object{}
		for _, h := range hostObjs[k] {
			if h.GetLabels()[translate.LabelManagedBy] != c.tr.VCluster || plantedNames[key{kind: k, name: h.GetName()}] {
				continue
			}
			if _, copied := h.GetAnnotations()[translate.AnnotationObjectName]; !copied {
				// Not a copy: the syncer's and the chart's own objects.
				if why := c.ownObject(k, h, hostObjs[podKind]); why != "" {
					r.add(&r.orphans, "host %s %s: %s", k, h.GetName(), why)
				}
				continue
			}
			if !c.tr.IsManaged(h, gvkString(k), c.hostName[k]) {
				r.add(&r.orphans, "host %s %s names a virtual object but is not a copy the syncer would make (translate.IsManaged)", k, h.GetName())
				continue
			}
			ref := translate.VirtualRefOf(h)
			vk := key{k, ref.Namespace, ref.Name}
			copies[vk] = append(copies[vk], h)
			v, ok := virtualByKey[vk]
			switch {
			case !ok:
				r.about(vk)
				r.add(&r.orphans, "host %s %s: its virtual object %s is gone (orphan)", k, h.GetName(), vk)
			case !synced(k, v):
				r.add(&r.orphans, "host %s %s: its virtual object %s is not synced (orphan)", k, h.GetName(), vk)
			case h.GetDeletionTimestamp() != nil:
				r.add(&r.orphans, "host %s %s is being deleted", k, h.GetName())
			}
		}
		for vk, hs := range copies {
			if len(hs) > 1 {
				r.duplicates += len(hs) - 1
				r.add(new(int), "%d host copies of %s", len(hs), vk)
			}
		}
		// Virtual side: every synced virtual object has its host copy,
		// and the copy is what the syncer makes of it.
		for vk, v := range virtualByKey {
			if !synced(k, v) || colliders[vk] {
				continue
			}
			hs := copies[vk]
			if len(hs) == 0 {
				r.about(vk)
				r.add(&r.missing, "%s has no host copy %s", vk, c.hostName[k](vk.name, vk.ns))
				continue
			}
			r.checked++
			if diff := c.compare(k, v, hs[0], nsLabels[vk.ns]); diff != "" {
				r.about(vk)
				r.add(&r.mismatched, "%s ≠ host %s: %s", vk, hs[0].GetName(), diff)
			}
		}
		// The churn's objects: as it wrote them.
		for vk, st := range state {
			if vk.kind != k {
				continue
			}
			n := r.virtualLost + r.notDeleted
			c.checkChurned(r, vk, st, virtualByKey[vk], hostValues[vk])
			if r.virtualLost+r.notDeleted > n {
				r.about(vk)
			}
		}
		// Names of the churn's namespaces it never made.
		for vk, v := range virtualByKey {
			if _, ours := state[vk]; !ours && slices.Contains(c.namespaces, vk.ns) && !colliders[vk] && !(k == configMapKind && vk.name == "kube-root-ca.crt") {
				r.add(&r.notDeleted, "%s (UID %s) was never made by the churn", vk, v.GetUID())
			}
		}
	}
	// What the churn saw while it ran ("lost" is in the state, counted
	// above).
	for _, p := range churnProblems["replaced"] {
		r.add(&r.virtualLost, "replaced during the churn: %s", p)
	}
	for _, p := range churnProblems["resurrected"] {
		r.add(&r.notDeleted, "during the churn: %s", p)
	}
	for _, p := range churnProblems["error"] {
		r.add(&r.churnErrors, "%s", p)
	}

	// The colliding virtual objects: a Warning SyncError each.
	for _, p := range c.planted {
		if p.collidesWith == nil {
			continue
		}
		r.collisions++
		if v := virtualObjs[p.collidesWith.kind]; !slices.ContainsFunc(v, func(o client.Object) bool {
			return o.GetNamespace() == p.collidesWith.ns && o.GetName() == p.collidesWith.name
		}) {
			r.add(&r.virtualLost, "%s (colliding with an unmanaged host object) is gone", p.collidesWith)
		}
		var events corev1.EventList
		if err := c.virtual.List(ctx, &events, client.InNamespace(p.collidesWith.ns)); err != nil {
			return nil, fmt.Errorf("virtual events: %w", err)
		}
		if slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Kind == p.collidesWith.kind.String() && e.InvolvedObject.Name == p.collidesWith.name &&
				e.Type == corev1.EventTypeWarning && e.Reason == "SyncError"
		}) {
			r.collisionsReported++
		} else {
			r.add(new(int), "%s collides with unmanaged host %s %s but has no Warning SyncError event", p.collidesWith, p.kind, p.name)
		}
	}
	return r, nil
}

// checkChurned compares virtual object v (nil when there is none) with
// what the churn knows of vk.
func (c *checker) checkChurned(r *report, vk key, st objState, v client.Object, hostValues map[string]bool) {
	switch {
	case st.lost != "":
		r.add(&r.virtualLost, "%s lost: %s", vk, st.lost)
	case !st.exists && v != nil && !slices.Contains(st.pastUIDs, v.GetUID()):
		r.add(&r.notDeleted, "%s exists (UID %s) though the churn deleted it: resurrected", vk, v.GetUID())
	case !st.exists && v != nil:
		r.add(&r.notDeleted, "%s (UID %s) deleted by the churn is still there", vk, v.GetUID())
	case !st.exists:
	case v == nil:
		r.add(&r.virtualLost, "%s (UID %s) is gone", vk, st.uid)
	default:
		if v.GetUID() != st.uid {
			// The syncer recreates a virtual Service to give it the host's
			// cluster IP; nothing else may replace an object.
			if svc, ok := v.(*corev1.Service); !ok || svc.Spec.ClusterIP == st.clusterIP {
				r.add(&r.virtualLost, "%s has UID %s, the churn made %s", vk, v.GetUID(), st.uid)
				return
			}
		}
		if bad := desired(vk, st.gen, st.inc, st.runnable).verify(v, hostValues); len(bad) > 0 {
			r.add(&r.virtualLost, "%s is not as the churn wrote it (gen %d): %s", vk, st.gen, strings.Join(bad, "; "))
		}
		r.serviceRecreations += st.recreations
	}
}

// ownObject checks a host object labelled as the virtual cluster's that
// is no copy of a virtual object: the Service that backs the virtual
// default/kubernetes, the chart's certificates, and the Secret holding a
// host pod's service-account token, which must belong to (be owned by) a
// host pod of that name. It returns what is wrong, "" when nothing.
func (c *checker) ownObject(k kind, h client.Object, hostPods []client.Object) string {
	switch {
	case k == serviceKind && h.GetName() == c.tr.KubernetesServiceName():
		return ""
	case k == secretKind && (h.GetName() == controlplane.CertsSecretName(c.tr.VCluster) || h.GetName() == controlplane.KubeconfigSecretName(c.tr.VCluster)):
		return ""
	case k == secretKind && strings.HasSuffix(h.GetName(), "-sa-token"):
		for _, p := range hostPods {
			if pods.TokenSecretName(p.GetName()) != h.GetName() {
				continue
			}
			for _, o := range h.GetOwnerReferences() {
				if o.Kind == "Pod" && o.UID == p.GetUID() {
					return ""
				}
			}
			return fmt.Sprintf("token Secret of host pod %s (UID %s) is not owned by it (owners %v)", p.GetName(), p.GetUID(), h.GetOwnerReferences())
		}
		return fmt.Sprintf("token Secret without its host pod (owners %v): leaked", h.GetOwnerReferences())
	}
	return "an object labelled as the virtual cluster's that is neither a copy nor one the syncer or the chart makes"
}

// compare returns how host copy h differs from what the syncer makes of
// virtual object v, "" when it does not: the labels and annotations are a
// fixed point of the syncer's merge (translate.Translator.SyncMetadata
// without a base changes nothing: every virtual key on the host, the
// lists of copied keys right, nothing the virtual object dropped left),
// plus, per kind, the fields that flow virtual → host: data; type, ports
// and selector (services.HostSpec); container images (pods.HostSpec).
func (c *checker) compare(k kind, v, h client.Object, nsLabels map[string]string) string {
	var diffs []string
	if uid := h.GetAnnotations()[translate.AnnotationObjectUID]; uid != string(v.GetUID()) {
		diffs = append(diffs, fmt.Sprintf("object-uid %s, virtual UID %s", uid, v.GetUID()))
	}
	ref := translate.VirtualRef{Kind: gvkString(k), Name: v.GetName(), Namespace: v.GetNamespace(), UID: v.GetUID()}
	m := c.tr.SyncMetadata(nil, v, h, ref, h.GetName())
	wantLabels, wantAnns := m.HostLabels, m.HostAnnotations
	if vp, ok := v.(*corev1.Pod); ok {
		wantLabels = pods.HostLabels(wantLabels, c.tr, nsLabels)
		maps.Copy(wantAnns, pods.HostAnnotations(vp, nil))
	}
	if d := mapDiff(h.GetLabels(), wantLabels); d != "" {
		diffs = append(diffs, "labels: "+d)
	}
	if d := mapDiff(h.GetAnnotations(), wantAnns); d != "" {
		diffs = append(diffs, "annotations: "+d)
	}
	switch v := v.(type) {
	case *corev1.Secret:
		hs := h.(*corev1.Secret)
		if !equality.Semantic.DeepEqual(hs.Data, v.Data) || hs.Type != secrets.HostType(v.Type) {
			diffs = append(diffs, fmt.Sprintf("type %s data %s, want %s %s", hs.Type, secretData(hs.Data), secrets.HostType(v.Type), secretData(v.Data)))
		}
	case *corev1.ConfigMap:
		hc := h.(*corev1.ConfigMap)
		if !equality.Semantic.DeepEqual(hc.Data, v.Data) || !equality.Semantic.DeepEqual(hc.BinaryData, v.BinaryData) {
			diffs = append(diffs, fmt.Sprintf("data %v, want %v", hc.Data, v.Data))
		}
	case *corev1.Service:
		hs := h.(*corev1.Service)
		if v.Namespace == "kube-system" && v.Name == "kube-dns" {
			break // its host copy leads to the control plane pod's DNS server (services.DNSBackend)
		}
		want := services.HostSpec(v, c.tr, &hs.Spec, nil)
		if hs.Spec.Type != want.Type || !equality.Semantic.DeepEqual(hs.Spec.Ports, want.Ports) ||
			!maps.Equal(hs.Spec.Selector, want.Selector) || hs.Spec.ClusterIP != v.Spec.ClusterIP {
			diffs = append(diffs, fmt.Sprintf("type %s ports %s selector %v clusterIP %s, want %s %s %v %s", hs.Spec.Type, portsString(hs.Spec.Ports),
				hs.Spec.Selector, hs.Spec.ClusterIP, want.Type, portsString(want.Ports), want.Selector, v.Spec.ClusterIP))
		}
	case *corev1.Pod:
		hp := h.(*corev1.Pod)
		want := pods.HostSpec(v, pods.Environment{Translator: c.tr}, nil)
		if got, exp := containerImages(hp.Spec.Containers), containerImages(want.Containers); !slices.Equal(got, exp) {
			diffs = append(diffs, fmt.Sprintf("images %v, want %v", got, exp))
		}
	}
	return strings.Join(diffs, "; ")
}

func containerImages(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name+"="+c.Image)
	}
	return out
}

func secretData(d map[string][]byte) string {
	m := map[string]string{}
	for k, v := range d {
		m[k] = string(v)
	}
	return fmt.Sprint(m)
}

// mapDiff describes how got differs from want, "" when equal.
func mapDiff(got, want map[string]string) string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s missing (want %q)", k, want[k]))
		} else if g != want[k] {
			d = append(d, fmt.Sprintf("%s=%q, want %q", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s=%q extra", k, got[k]))
		}
	}
	return strings.Join(d, ", ")
}
