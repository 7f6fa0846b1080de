package pods

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/resources/nodes"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// tokenLifetime is how long a token minted for a host pod is valid: as long
// as the API server's extended bound-token lifetime, one year.
const tokenLifetime = 365 * 24 * time.Hour

// Syncer is the pod resource syncer.
type Syncer struct {
	syncer.Kind[*corev1.Pod]
	env Environment
}

// New returns the pod syncer. env.KubernetesIP and env.DNSIP are looked up
// on the host for each new pod; the other fields are used as given.
func New(env Environment) *Syncer {
	return &Syncer{env: env, Kind: syncer.Kind[*corev1.Pod]{Plural: "pods", Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
		NewObject: func() *corev1.Pod { return &corev1.Pod{} }, Translator: env.Translator}}
}

// environment completes env with the current host IPs of the virtual
// cluster's API server and DNS Services.
func (r *Syncer) environment(ctx context.Context, s *syncer.Context) Environment {
	env := r.env
	ip := func(name string) string {
		var svc corev1.Service
		if err := s.Host.Get(ctx, types.NamespacedName{Namespace: s.Translator.HostNamespace, Name: name}, &svc); err != nil {
			return ""
		}
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			return ""
		}
		return svc.Spec.ClusterIP
	}
	env.KubernetesIP = ip(s.Translator.KubernetesServiceName())
	env.DNSIP = ip(s.Translator.DNSServiceHostName())
	env.Services = func(namespace string) []corev1.Service {
		var list corev1.ServiceList
		if err := s.Virtual.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return nil
		}
		return list.Items
	}
	env.NodeVisible = func(name string) bool {
		var node corev1.Node
		return s.Virtual.Get(ctx, types.NamespacedName{Name: name}, &node) == nil
	}
	env.HostAllocatable = func(name string) corev1.ResourceList {
		var node corev1.Node
		if err := s.Host.Get(ctx, types.NamespacedName{Name: name}, &node); err != nil {
			return nil
		}
		return node.Status.Allocatable
	}
	env.PriorityClass = func(name string) string {
		var pc schedulingv1.PriorityClass
		if err := s.Virtual.Get(ctx, types.NamespacedName{Name: name}, &pc); err != nil {
			return ""
		}
		return env.HostPriorityClass(&pc)
	}
	return env
}

func podRef(pod *corev1.Pod) mapping.Ref {
	return mapping.Ref{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}
}

// hasRun reports whether the virtual pod carries status from a host pod,
// i.e. its host pod existed before.
func hasRun(pod *corev1.Pod) bool {
	return pod.Status.StartTime != nil || len(pod.Status.ContainerStatuses) > 0
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.Pod]) (ctrl.Result, error) {
	v := c.Virtual
	if c.WasSynced || hasRun(v) {
		// The host pod was deleted (evicted, or deleted by a host user): the
		// pod is gone, as on a node that lost it. Its controller makes a new
		// one. The host API server, not the cache, says so: a cache that has
		// not seen the host pod just made (its watch restarting after the
		// host API server did) must not cost the tenant its pod.
		_, exists, err := liveHostPod(ctx, s, c.HostName)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case exists:
			return ctrl.Result{RequeueAfter: time.Second}, nil // the cache is behind
		}
		return ctrl.Result{}, deleteVirtual(ctx, s, v)
	}
	s.SetReferences(ctx, podRef(v), References(v))
	if err := r.env.PodSecurity.Check(v); err != nil {
		return ctrl.Result{}, refuse(ctx, s, v, err)
	}
	if r.env.WaitsForScheduler(v) {
		return ctrl.Result{}, nil // the binding is an update of the pod: it comes back then
	}
	if env := r.env; env.SyncServiceAccounts {
		// The host admits a pod only once its service account exists: the
		// ServiceAccount syncer makes it.
		var sa corev1.ServiceAccount
		err := s.Host.Get(ctx, types.NamespacedName{Namespace: s.Translator.HostNamespace, Name: env.HostServiceAccountOf(v)}, &sa)
		if apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	var token *Token
	if NeedsToken(v) {
		t, err := mintToken(ctx, s, v)
		if err != nil {
			return ctrl.Result{}, err
		}
		token = t
		if r.env.UseSecretsForSATokens {
			token.Secret = TokenSecretName(c.HostName)
		}
	}
	env := r.environment(ctx, s)
	host := &corev1.Pod{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSpec(v, env, token)}
	reportRestricted(s, v, env, host)
	host.Labels = HostLabels(host.Labels, s.Translator, namespaceLabels(ctx, s, v.Namespace))
	maps.Copy(host.Annotations, HostAnnotations(v, token))
	res, err := c.CreateHost(ctx, s, host)
	if err != nil || res.RequeueAfter > 0 {
		return res, err // not created (the name is taken): nothing to own the Secret or the ConfigMap
	}
	// The trust bundles' ConfigMap comes after its pod, owned by it (the
	// host's garbage collector deletes it with the pod); the kubelet waits
	// for it.
	if err := writeTrustBundles(ctx, s, v, host); err != nil {
		return res, err
	}
	// The pod certificates too (the kubelet waits for them), once the
	// pod is bound to a node (with the virtual scheduler, already now).
	again, err := ensurePodCertificates(ctx, s, v, host)
	if err != nil {
		return res, err
	}
	res.RequeueAfter = again
	if token == nil || token.Secret == "" {
		return res, nil
	}
	// The Secret comes after its pod, owned by it from the start (the
	// host's garbage collector deletes it with the pod); the kubelet
	// waits for it before it starts the pod's containers. A syncer that
	// dies in between makes it at the pod's next sync (ensureTokenSecret).
	return res, writeTokenSecret(ctx, s, token, host)
}

// addEphemeralContainers gives the host pod the ephemeral containers added
// to the virtual pod since (`kubectl debug`), translated as HostSpec
// translates containers, through the host's ephemeralcontainers
// subresource: they cannot be added by a patch of the pod.
func (r *Syncer) addEphemeralContainers(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod) error {
	if len(virtual.Spec.EphemeralContainers) == len(host.Spec.EphemeralContainers) {
		return nil
	}
	after := syncer.DeepCopy(host)
	for _, c := range HostSpec(virtual, r.environment(ctx, s), nil).EphemeralContainers {
		if !slices.ContainsFunc(host.Spec.EphemeralContainers, func(h corev1.EphemeralContainer) bool { return h.Name == c.Name }) {
			after.Spec.EphemeralContainers = append(after.Spec.EphemeralContainers, c)
		}
	}
	if len(after.Spec.EphemeralContainers) == len(host.Spec.EphemeralContainers) {
		return nil
	}
	if err := s.Host.SubResource("ephemeralcontainers").Update(ctx, after); err != nil {
		return fmt.Errorf("ephemeral containers of the host pod: %w", err)
	}
	return nil
}

// ensureTokenSecret makes sure the token Secret host pod host reads
// (useSecretsForSATokens) exists and is owned by the pod: a syncer that
// died between making the pod and its Secret makes the Secret, with a
// token minted for virtual pod virtual, at the pod's next sync; a Secret
// without an owner (made before its pod by an earlier version) gets the
// pod as owner, so the host's garbage collector deletes it with the pod.
func (r *Syncer) ensureTokenSecret(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod) error {
	name := TokenSecretName(host.Name)
	if !readsSecret(&host.Spec, name) {
		return nil
	}
	key := types.NamespacedName{Namespace: host.Namespace, Name: name}
	var secret corev1.Secret
	err := s.Host.Get(ctx, key, &secret)
	if apierrors.IsNotFound(err) {
		// The cache may not have seen a Secret just made.
		err = s.HostReader.Get(ctx, key, &secret)
	}
	switch {
	case apierrors.IsNotFound(err):
		token, err := mintToken(ctx, s, virtual)
		if err != nil {
			return err
		}
		token.Secret = name
		return writeTokenSecret(ctx, s, token, host)
	case err != nil:
		return err
	}
	if slices.ContainsFunc(secret.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == host.UID }) ||
		secret.Labels[translate.LabelManagedBy] != s.Translator.VCluster {
		return nil
	}
	return ownTokenSecret(ctx, s, name, host)
}

// readsSecret tells whether a projected volume of spec reads Secret name.
func readsSecret(spec *corev1.PodSpec, name string) bool {
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret != nil && src.Secret.Name == name {
				return true
			}
		}
	}
	return false
}

// refuse keeps a pod that fails the Pod Security check off the host: a
// Warning SyncError event with PodSecurity admission's words, and the
// virtual pod's PodScheduled condition False with reason PodSecurity, so
// that it shows Pending and why.
func refuse(ctx context.Context, s *syncer.Context, pod *corev1.Pod, err error) error {
	msg := "not synced to the host: " + err.Error()
	s.ReportSyncError(pod, "%s", msg)
	cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: ReasonPodSecurity, Message: msg}
	for _, c := range pod.Status.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			return nil
		}
	}
	after := syncer.DeepCopy(pod)
	cond.LastTransitionTime = metav1.Now()
	after.Status.Conditions = append(slices.DeleteFunc(after.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == cond.Type }), cond)
	if after.Status.Phase == "" {
		after.Status.Phase = corev1.PodPending
	}
	return s.PatchVirtualStatus(ctx, pod, after)
}

// ReasonPodSecurity is the reason of the PodScheduled condition of a
// virtual pod that the Pod Security check keeps off the host.
const ReasonPodSecurity = "PodSecurity"

// reportRestricted tells the tenant, with a Warning event on the virtual
// pod, what the isolation rules took out of its host pod host: tolerations
// and the node name.
func reportRestricted(s *syncer.Context, pod *corev1.Pod, env Environment, host *corev1.Pod) {
	var parts []string
	if dropped := env.DroppedTolerations(pod); len(dropped) > 0 {
		names := make([]string, len(dropped))
		for i, t := range dropped {
			names[i] = policy.TolerationString(t)
		}
		parts = append(parts, "tolerations "+strings.Join(names, ", ")+" (policies.isolation.tolerations)")
	}
	if pod.Spec.NodeName != "" && host.Spec.NodeName == "" {
		parts = append(parts, "nodeName "+pod.Spec.NodeName+" (policies.isolation.nodeName: the host schedules the pod)")
	}
	if len(parts) > 0 {
		s.ReportPolicy(pod, "not applied on the host: %s", strings.Join(parts, "; "))
	}
}

// writeTokenSecret creates (or refreshes) the host Secret of token, owned
// by host pod owner and labelled as the virtual cluster's (virtual delete
// removes it) but not a copy of a virtual Secret.
func writeTokenSecret(ctx context.Context, s *syncer.Context, token *Token, owner *corev1.Pod) error {
	ownedBy := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: token.Secret, Namespace: s.Translator.HostNamespace,
		Labels: map[string]string{translate.LabelManagedBy: s.Translator.VCluster}, OwnerReferences: ownedBy},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	for aud, v := range token.Values {
		secret.Data[KeyFor(aud)] = []byte(v)
	}
	err := s.Host.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		var cur corev1.Secret
		if err := s.HostReader.Get(ctx, client.ObjectKeyFromObject(secret), &cur); err != nil {
			return fmt.Errorf("token secret %s: %w", secret.Name, err)
		}
		if cur.Labels[translate.LabelManagedBy] != s.Translator.VCluster {
			return fmt.Errorf("host secret %s/%s exists and is not managed by virtual cluster %s", cur.Namespace, cur.Name, s.Translator.VCluster)
		}
		cur.Data, cur.OwnerReferences = secret.Data, ownedBy
		err = s.Host.Update(ctx, &cur)
	}
	if err != nil {
		return fmt.Errorf("token secret %s: %w", secret.Name, err)
	}
	return nil
}

// ownTokenSecret makes host pod the owner of token Secret name.
func ownTokenSecret(ctx context.Context, s *syncer.Context, name string, pod *corev1.Pod) error {
	var created corev1.Pod
	if err := s.HostReader.Get(ctx, client.ObjectKeyFromObject(pod), &created); err != nil {
		return client.IgnoreNotFound(err)
	}
	patch := map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: created.Name, UID: created.UID}}}}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Translator.HostNamespace}}
	if err := s.Host.Patch(ctx, secret, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("token secret %s: owner: %w", name, err)
	}
	return nil
}

// mintToken asks the virtual API server for the tokens of the pod's
// service account, bound to the pod, for the host pod's token volumes: one
// per audience they ask for (TokenAudiences; none: the API server's own).
func mintToken(ctx context.Context, s *syncer.Context, pod *corev1.Pod) (*Token, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Spec.ServiceAccountName}}
	if sa.Name == "" {
		sa.Name = "default"
	}
	token := &Token{Annotation: translate.AnnotationPodTokenPrefix + randomLetters(8), Values: map[string]string{}}
	for _, aud := range TokenAudiences(pod) {
		req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(tokenLifetime / time.Second)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		}}
		if aud != "" {
			req.Spec.Audiences = []string{aud}
		}
		if err := s.Virtual.SubResource("token").Create(ctx, sa, req); err != nil {
			return nil, fmt.Errorf("token for service account %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		token.Values[aud] = req.Status.Token
	}
	return token, nil
}

func randomLetters(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

func namespaceLabels(ctx context.Context, s *syncer.Context, name string) map[string]string {
	var ns corev1.Namespace
	if err := s.Virtual.Get(ctx, types.NamespacedName{Name: name}, &ns); err != nil {
		return nil
	}
	return ns.Labels
}

// Sync implements syncer.Resource.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.Pod]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	s.SetReferences(ctx, podRef(p.Virtual), References(p.Virtual))
	pending := false // a spec change sent to the host now, not yet observed

	// virtual → host: metadata, and the few spec fields a pod may change;
	// nothing when the pod fails the Pod Security check now (an ephemeral
	// container added, or a stricter level since it was created): the host
	// pod runs on as it was.
	if err := r.env.PodSecurity.Check(p.Virtual); err != nil {
		s.ReportSyncError(p.Virtual, "not updated on the host: %v", err)
		p.KeepBase()
	} else {
		h.Labels = HostLabels(h.Labels, s.Translator, namespaceLabels(ctx, s, p.Virtual.Namespace))
		// From the merged virtual pod v: the labels the downward API
		// shows include those just copied from the host.
		maps.Copy(h.Annotations, HostAnnotations(v, nil))
		syncSpec(&h.Spec, &p.Virtual.Spec, r.env)
		// A resize first: the annotation that records it goes with the
		// patch, so a resize that fails is tried again.
		// h's annotation is the virtual pod's hash now (HostAnnotations).
		if sent := p.Host.Annotations[translate.AnnotationPodResources]; sent != "" && sent != h.Annotations[translate.AnnotationPodResources] {
			if err := resize(ctx, s, r.environment(ctx, s).ResourcesForHost(p.Virtual), p.Host); err != nil {
				return ctrl.Result{}, err
			}
			pending = true
		}
		pending = pending || !equality.Semantic.DeepEqual(h.Spec, p.Host.Spec)
		if err := p.PatchHost(ctx, s, h); err != nil {
			return ctrl.Result{}, err
		}
		if err := s.PatchVirtual(ctx, p.Virtual, v); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.addEphemeralContainers(ctx, s, p.Virtual, p.Host); err != nil {
			return ctrl.Result{}, err
		}
	}

	if err := r.ensureTokenSecret(ctx, s, p.Virtual, p.Host); err != nil {
		return ctrl.Result{}, err
	}
	if err := writeTrustBundles(ctx, s, p.Virtual, p.Host); err != nil {
		return ctrl.Result{}, err
	}
	again, err := ensurePodCertificates(ctx, s, p.Virtual, p.Host)
	if err != nil {
		return ctrl.Result{}, err
	}

	// host → virtual: the node, through a Binding, then the status.
	if node := p.Host.Spec.NodeName; node != "" && p.Virtual.Spec.NodeName == "" {
		if err := nodes.Ensure(ctx, s, node); err != nil {
			return ctrl.Result{}, fmt.Errorf("virtual node %s: %w", node, err)
		}
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Virtual.Name, Namespace: p.Virtual.Namespace, UID: p.Virtual.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}
		if err := s.Virtual.SubResource("binding").Create(ctx, p.Virtual, binding); err != nil && !apierrors.IsConflict(err) {
			return ctrl.Result{}, fmt.Errorf("bind to node %s: %w", node, err)
		}
	}
	vs := syncer.DeepCopy(p.Virtual)
	vs.Status = VirtualStatus(&p.Host.Status, &p.Virtual.Status)
	vs.Status.ObservedGeneration = ObservedGeneration(p.Virtual, p.Host, !pending)
	return ctrl.Result{RequeueAfter: again}, s.PatchVirtualStatus(ctx, p.Virtual, vs)
}

// syncSpec copies the spec fields a running pod may change from the
// virtual spec v to the host spec h: container images (by container name), activeDeadlineSeconds,
// added tolerations (those the isolation rule lets through), and removed
// scheduling gates.
func syncSpec(h, v *corev1.PodSpec, env Environment) {
	// Containers are matched by name: the host spec may have more (the
	// rewriteHosts init container) in other positions.
	images := func(hc, vc []corev1.Container) {
		for i := range hc {
			for j := range vc {
				if vc[j].Name == hc[i].Name {
					img := vc[j].Image
					if t, ok := env.TranslateImage[img]; ok {
						img = t
					}
					hc[i].Image = img
				}
			}
		}
	}
	images(h.Containers, v.Containers)
	images(h.InitContainers, v.InitContainers)
	h.ActiveDeadlineSeconds = v.ActiveDeadlineSeconds
	for _, t := range env.hostTolerations(v.Tolerations) {
		if !slices.ContainsFunc(h.Tolerations, func(x corev1.Toleration) bool { return x.MatchToleration(&t) }) {
			h.Tolerations = append(h.Tolerations, t)
		}
	}
	h.SchedulingGates = slices.DeleteFunc(h.SchedulingGates, func(g corev1.PodSchedulingGate) bool {
		return !slices.ContainsFunc(v.SchedulingGates, func(x corev1.PodSchedulingGate) bool { return x.Name == g.Name })
	})
}

// VirtualStatus is the virtual pod's status from its host pod's: everything
// the host reports, but the virtual QoS class (computed from the virtual
// spec), and the virtual pod's conditions of a type the host pod has none
// of and that is not the kubelet's (kubeletCondition), after the host's:
// those the virtual cluster's own components set (DisruptionTarget from an
// eviction or a preemption in the virtual cluster, which a Job's
// podFailurePolicy reads; a readiness gate's condition the tenant's
// controller sets). A type both have takes the host's; a kubelet's type the
// host pod no longer has (PodResizeInProgress once a resize is done) goes.
// The inputs are not modified.
func VirtualStatus(host, virtual *corev1.PodStatus) corev1.PodStatus {
	st := *host.DeepCopy()
	st.QOSClass = virtual.QOSClass
	for _, c := range virtual.Conditions {
		if !kubeletCondition(c.Type) && !slices.ContainsFunc(host.Conditions, func(h corev1.PodCondition) bool { return h.Type == c.Type }) {
			st.Conditions = append(st.Conditions, *c.DeepCopy())
		}
	}
	return st
}

// kubeletCondition reports whether pod condition type t is the kubelet's
// (or, for PodScheduled, the scheduler's): on a virtual pod such a
// condition comes only from the host pod.
func kubeletCondition(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
		corev1.PodResizePending, corev1.PodResizeInProgress:
		return true
	}
	return false
}

// Finalize implements syncer.Finalizer: the syncer completes a virtual pod's
// deletion as a kubelet would. The host pod is deleted with the virtual
// grace period; once it is gone the virtual pod is removed. Gone means
// gone on the host API server, not only in the cache: a cache that has not
// seen the host pod (its watch restarting after the host API server did)
// must not end the virtual pod while its containers still run.
func (r *Syncer) Finalize(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod, hostExists bool) (ctrl.Result, error) {
	if hostExists {
		if host.DeletionTimestamp != nil {
			return ctrl.Result{}, nil // the host watch wakes us when it is gone
		}
		uid := host.UID
		opts := []client.DeleteOption{client.Preconditions{UID: &uid}}
		if g := virtual.DeletionGracePeriodSeconds; g != nil {
			opts = append(opts, client.GracePeriodSeconds(*g))
		}
		return ctrl.Result{}, client.IgnoreNotFound(s.Host.Delete(ctx, host, opts...))
	}
	live, exists, err := liveHostPod(ctx, s, r.HostName(virtual.Name, virtual.Namespace))
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case exists && live.Annotations[translate.AnnotationObjectUID] == string(virtual.UID):
		return ctrl.Result{RequeueAfter: time.Second}, nil // the cache is behind
	}
	// The pod ends as the kubelet ends a deleted pod: in a terminal
	// phase, which a finalizer's owner may wait for (the Job controller's
	// batch.kubernetes.io/job-tracking, to apply its podFailurePolicy).
	if st, changed := TerminatedStatus(&virtual.Status, time.Now()); changed {
		after := syncer.DeepCopy(virtual)
		after.Status = st
		if err := s.PatchVirtualStatus(ctx, virtual, after); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	s.EnqueueRefs(ctx, s.Mappings.Forget(podRef(virtual)))
	return ctrl.Result{}, deleteVirtual(ctx, s, virtual)
}

// TerminatedStatus is the status of a deleted virtual pod whose host pod
// is gone, as the kubelet leaves a pod it stopped for a deletion: a pod
// not already Succeeded or Failed is Failed, and each container that was
// not terminated (its end not seen on the host) is terminated with exit
// code 137, reason ContainerStatusUnknown; Ready and ContainersReady are
// False. It reports whether anything changed; st is not modified.
func TerminatedStatus(st *corev1.PodStatus, now time.Time) (corev1.PodStatus, bool) {
	out := *st.DeepCopy()
	if out.Phase == corev1.PodSucceeded || out.Phase == corev1.PodFailed {
		return out, false
	}
	out.Phase = corev1.PodFailed
	at := metav1.NewTime(now)
	for _, list := range [][]corev1.ContainerStatus{out.InitContainerStatuses, out.ContainerStatuses, out.EphemeralContainerStatuses} {
		for i := range list {
			c := &list[i]
			if c.State.Terminated != nil {
				continue
			}
			started := metav1.Time{}
			if c.State.Running != nil {
				started = c.State.Running.StartedAt
			}
			c.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
				Message: "the host pod was deleted before its container's end was seen", StartedAt: started, FinishedAt: at}}
			c.Ready, c.Started = false, ptr.To(false)
		}
	}
	for i := range out.Conditions {
		if t := out.Conditions[i].Type; (t == corev1.PodReady || t == corev1.ContainersReady) && out.Conditions[i].Status != corev1.ConditionFalse {
			out.Conditions[i].Status, out.Conditions[i].LastTransitionTime, out.Conditions[i].Reason = corev1.ConditionFalse, at, "PodFailed"
		}
	}
	return out, true
}

// liveHostPod reads host pod name from the host API server, not the cache:
// before a virtual pod is ended because its host pod is gone. exists is
// false when the host has no such pod.
func liveHostPod(ctx context.Context, s *syncer.Context, name string) (*corev1.Pod, bool, error) {
	var p corev1.Pod
	err := s.HostReader.Get(ctx, types.NamespacedName{Namespace: s.Translator.HostNamespace, Name: name}, &p)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &p, true, nil
}

// deleteVirtual removes a virtual pod at once (grace 0), guarded by its UID.
func deleteVirtual(ctx context.Context, s *syncer.Context, pod *corev1.Pod) error {
	uid := pod.UID
	err := s.Virtual.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
