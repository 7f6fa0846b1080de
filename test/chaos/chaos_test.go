package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

const (
	// enableEnv must be set for TestChaos to run (make chaos, make test).
	enableEnv = "CLUSTERSYNC_CHAOS"
	// vclusterName is the virtual cluster under test, hostNamespace its
	// host namespace.
	vclusterName  = "chaos"
	hostNamespace = "vc-" + vclusterName
	// imageTag is the tag clustersync's images are pushed with.
	imageTag = "chaos"
)

// configAll is sync.toHost.secrets and configMaps as the test sets them:
// every one synced, not only those pods use.
var configAll = config.SelectiveSync{Enabled: true, All: true}

// params are the figures of a run, from the environment.
type params struct {
	objects, syncerKills, podDeletes, apiserverRestarts int
	workers, maxRunning                                 int
	seed                                                uint64
	converge                                            time.Duration
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number ≥ 0", name, v)
	}
	return n
}

func readParams(t *testing.T) params {
	t.Helper()
	p := params{
		objects:           envInt(t, "CLUSTERSYNC_CHAOS_OBJECTS", 5000),
		syncerKills:       envInt(t, "CLUSTERSYNC_CHAOS_SYNCER_KILLS", 20),
		podDeletes:        envInt(t, "CLUSTERSYNC_CHAOS_POD_DELETES", 2),
		apiserverRestarts: envInt(t, "CLUSTERSYNC_CHAOS_APISERVER_RESTARTS", 2),
		workers:           envInt(t, "CLUSTERSYNC_CHAOS_WORKERS", 6),
		converge:          time.Duration(envInt(t, "CLUSTERSYNC_CHAOS_CONVERGE_SECONDS", 300)) * time.Second,
		seed:              uint64(time.Now().UnixNano()),
	}
	if v := os.Getenv("CLUSTERSYNC_CHAOS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CLUSTERSYNC_CHAOS_SEED=%q: %v", v, err)
		}
		p.seed = s
	}
	// Pods that really run on the node: a few, not hundreds (the node is
	// this 2-core machine); the others carry a scheduling gate, so the
	// host never schedules them, and stay Pending.
	p.maxRunning = min(20, max(3, p.objects/250))
	return p
}

// TestChaos is the fault-injection suite of issue 12: a churn of
// p.objects creates (and about as many updates, deletes and host-side
// edits of host copies) over Pods, Services, Secrets and ConfigMaps in
// three virtual namespaces, while the syncer is SIGKILLed, the control
// plane pod deleted and the host's kube-apiserver restarted at points of
// the churn drawn from the seed; then, polled until it holds or the
// deadline passes: the host namespace equals the syncer's translation of
// the virtual objects (no copy missing, no orphan, no duplicate, no
// field that differs), the unmanaged host objects planted in the host
// namespace are untouched (the virtual objects whose host names they
// take got a SyncError event), and every virtual object is as the churn
// wrote it. It prints one summary line with those counts and the time it
// took to converge after the last fault.
func TestChaos(t *testing.T) {
	if os.Getenv(enableEnv) == "" {
		t.Skipf("set %s=1 to run it (make chaos; make test runs a short one): it needs the machine's real node, which test/e2e uses too", enableEnv)
	}
	p := readParams(t)
	t.Logf("chaos: seed=%d (CLUSTERSYNC_CHAOS_SEED=%d repeats this sequence) objects=%d syncer-kills=%d pod-deletes=%d apiserver-restarts=%d workers=%d",
		p.seed, p.seed, p.objects, p.syncerKills, p.podDeletes, p.apiserverRestarts, p.workers)
	ctx := t.Context()
	begin := time.Now()

	devUpReal(t)
	tests.PushImages(t, imageTag)
	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	host := clientFor(t, hostKubeconfig)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	start := time.Now()
	out, err := cliErr("virtual", "create", vclusterName, "--kubeconfig-out", kubeconfig,
		"--set", "controlPlane.statefulSet.image.tag="+imageTag,
		"--set", "sync.toHost.secrets.all=true", "--set", "sync.toHost.configMaps.all=true",
		// The churn's pods and services are far more than a small team's
		// quota; the quota is not under test here.
		"--set", "policies.resourceQuota.enabled=false", "--set", "policies.limitRange.enabled=false")
	if err != nil {
		t.Fatalf("virtual create: %v\n%s\nhost namespace %s:\n%s", err, out, hostNamespace, describeHost(ctx, host))
	}
	t.Logf("virtual create: %.1f s", time.Since(start).Seconds())
	t.Cleanup(func() {
		if t.Failed() {
			keepLogs(t, hostKubeconfig)
		}
		if out, err := cliErr("virtual", "delete", vclusterName); err != nil {
			t.Errorf("virtual delete %s: %v\n%s", vclusterName, err, out)
		}
	})
	virtual := clientFor(t, kubeconfig)
	tr := translate.Translator{VCluster: vclusterName, HostNamespace: hostNamespace}
	rec := newRecorder()
	if err := rec.watch(ctx, restConfig(t, kubeconfig), "virtual", ""); err != nil {
		t.Fatal(err)
	}
	if err := rec.watch(ctx, restConfig(t, hostKubeconfig), "host", hostNamespace); err != nil {
		t.Fatal(err)
	}
	namespaces := []string{"chaos-a", "chaos-b", "chaos-c"}
	for _, ns := range namespaceObjects(namespaces) {
		if err := retry(ctx, time.Minute, func(ctx context.Context) error { return client.IgnoreAlreadyExists(virtual.Create(ctx, ns)) }); err != nil {
			t.Fatal(err)
		}
		// Pods are admitted once the namespace's ServiceAccount exists.
		if err := retry(ctx, time.Minute, func(ctx context.Context) error {
			err := virtual.Get(ctx, client.ObjectKey{Namespace: ns.GetName(), Name: "default"}, &corev1.ServiceAccount{})
			if apierrors.IsNotFound(err) {
				return errRetry
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	chk := newChecker(virtual, host, tr, namespaces)
	chk.planted = plant(t, host, virtual, chk)

	// The churn, with the faults at their points.
	g := newGenerator(p.seed, p.objects, p.maxRunning, namespaces)
	plan := planFaults(faultRand(p.seed), p.objects, p.syncerKills, p.podDeletes, p.apiserverRestarts)
	in := &injector{host: host, cri: tests.CRIClient(t), hostDir: filepath.Join(tests.Dir, "host"), logf: t.Logf, done: map[faultKind]int{}}
	ch := newChurn(virtual, host, tr, t.Logf)
	// A fault that fails (a host that does not come back) ends the churn:
	// its ops would only wait for their deadlines.
	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	dispatch, drain := ch.workers(churnCtx, p.workers)
	var opsByKind [4]int
	churnStart, next := time.Now(), 0
churn:
	for g.creates < p.objects {
		o := g.next()
		opsByKind[o.kind]++
		dispatch(o)
		if p.objects >= 10 && g.creates%(p.objects/10) == 0 && o.kind == opCreate {
			t.Logf("churn: %d/%d creates sent, %d ops done, %.1f s", g.creates, p.objects, ch.ops.Load(), time.Since(churnStart).Seconds())
		}
		for next < len(plan) && g.creates >= plan[next].atCreate {
			if err := in.inflict(ctx, plan[next]); err != nil {
				t.Errorf("fault %d: %v", next+1, err)
				stopChurn()
				break churn
			}
			next++
		}
	}
	drain()
	if t.Failed() {
		t.FailNow()
	}
	churnEnd := time.Now()
	t.Logf("churn: %d ops in %.1f s (creates %d, updates %d, deletes %d, host edits %d of which %d found no host copy yet)",
		ch.ops.Load(), churnEnd.Sub(churnStart).Seconds(), opsByKind[opCreate], opsByKind[opUpdate], opsByKind[opDelete],
		opsByKind[opHostEdit], ch.editsSkipped.Load())
	lastFault := in.lastFaults
	if lastFault.IsZero() {
		lastFault = churnEnd
	}

	// Convergence.
	var last *report
	var lastErr error
	deadline := time.Now().Add(p.converge)
	var converged time.Time
	for {
		state, hostValues, problems := ch.snapshot()
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		r, err := chk.check(cctx, state, hostValues, problems)
		cancel()
		if err == nil {
			last = r
			if r.ok() {
				converged = time.Now()
				break
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	if last == nil {
		t.Fatalf("no check could list the objects within %s: %v", p.converge, lastErr)
	}
	outcome := fmt.Sprintf("converged %.1fs after the last fault (%.1fs after the churn ended)",
		converged.Sub(lastFault).Seconds(), converged.Sub(churnEnd).Seconds())
	if converged.IsZero() {
		outcome = fmt.Sprintf("NOT converged %s after the churn ended", p.converge)
	}
	known := ""
	if k := last.knownString(); k != "" {
		known = "; known syncer bugs: " + k
	}
	summary := fmt.Sprintf("chaos: seed=%d objects=%d ops=%d faults: syncer-kills=%d pod-deletes=%d apiserver-restarts=%d; %s%s; %s; %.0fs in all",
		p.seed, p.objects, ch.ops.Load(), in.done[syncerKill], in.done[podDelete], in.done[apiserverRestart], last.counts(), known, outcome,
		time.Since(begin).Seconds())
	fmt.Println(summary)
	t.Logf("host-side edits: %d made, %d found no host copy; virtual Services recreated by the syncer (cluster IP taken on the host): %d; syncer restarts: %d",
		ch.edits.Load(), ch.editsSkipped.Load(), last.serviceRecreations, syncerRestarts(ctx, host))
	if in.done[syncerKill] != p.syncerKills || in.done[podDelete] != p.podDeletes || in.done[apiserverRestart] != p.apiserverRestarts {
		t.Errorf("faults inflicted: %v, want %d syncer kills, %d pod deletes, %d API server restarts", in.done, p.syncerKills, p.podDeletes, p.apiserverRestarts)
	}
	if !last.ok() {
		t.Errorf("not converged within %s after the churn:\n%s", p.converge, last)
		for _, k := range last.keys {
			t.Logf("what the watches saw of %s:\n%s", k, rec.history(k, chk.hostName[k.kind](k.name, k.ns)))
		}
	}
	if known := last.knownString(); known != "" && !t.Failed() {
		t.Skipf("converged but for known syncer bugs (test/chaos/knownbugs_test.go): %s\n%s", known, last)
	}
}

// plant makes the unmanaged host objects the syncer must leave alone: one
// per kind with the host name of a virtual object in chaos-a named
// "collide" (made too), and three look-alikes — the copy of a virtual
// object that does not exist but no managed-by label, a copy of another
// virtual cluster's, and one labelled as this virtual cluster's whose
// name is not the one the syncer would give its object.
func plant(t *testing.T, host, virtual client.Client, chk *checker) []planted {
	t.Helper()
	ctx := t.Context()
	var out []planted
	add := func(k kind, obj client.Object, collides *key) {
		obj.SetNamespace(hostNamespace)
		if err := retry(ctx, time.Minute, func(ctx context.Context) error {
			o := obj.DeepCopyObject().(client.Object)
			err := host.Create(ctx, o)
			if apierrors.IsForbidden(err) {
				// The host pod needs the namespace's default ServiceAccount,
				// which the host's controllers make.
				return errRetry
			}
			if err != nil {
				return err
			}
			out = append(out, planted{kind: k, name: o.GetName(), uid: string(o.GetUID()), resourceVersion: o.GetResourceVersion(), collidesWith: collides})
			return nil
		}); err != nil {
			t.Fatalf("plant host %s %s: %v", k, obj.GetName(), err)
		}
	}
	mine := map[string]string{"owner": "host-admin"}
	for k := range numKinds {
		vk := key{kind: k, ns: "chaos-a", name: "collide"}
		meta := metav1.ObjectMeta{Name: chk.hostName[k](vk.name, vk.ns), Labels: mine}
		var obj client.Object
		switch k {
		case podKind:
			obj = &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: schedulingGate}},
				Containers: []corev1.Container{{Name: "c", Image: pauseImage}}}}
		case serviceKind:
			obj = &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		case secretKind:
			obj = &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": []byte("host admin's")}}
		case configMapKind:
			obj = &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "host admin's"}}
		}
		add(k, obj, &vk)
		v := desired(vk, 1, 0, false).object(vk, false)
		if err := retry(ctx, time.Minute, func(ctx context.Context) error { return virtual.Create(ctx, v.DeepCopyObject().(client.Object)) }); err != nil {
			t.Fatal(err)
		}
	}
	bookkeeping := func(k kind, name, ns string) map[string]string {
		return map[string]string{translate.AnnotationObjectName: name, translate.AnnotationObjectNamespace: ns,
			translate.AnnotationObjectKind: gvkString(k), translate.AnnotationObjectUID: "00000000-0000-0000-0000-000000000000"}
	}
	add(configMapKind, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: chk.hostName[configMapKind]("ghost", "chaos-a"),
		Annotations: bookkeeping(configMapKind, "ghost", "chaos-a")}}, nil)
	other := translate.Translator{VCluster: vclusterName + "-other", HostNamespace: hostNamespace}
	add(secretKind, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: other.HostName("sec-0", "chaos-b"),
		Labels:      map[string]string{translate.LabelManagedBy: other.VCluster, translate.LabelNamespace: "chaos-b"},
		Annotations: bookkeeping(secretKind, "sec-0", "chaos-b")}}, nil)
	add(configMapKind, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lookalike-of-cm-0",
		Labels:      map[string]string{translate.LabelManagedBy: vclusterName, translate.LabelNamespace: "chaos-a"},
		Annotations: bookkeeping(configMapKind, "cm-0", "chaos-a")}}, nil)
	return out
}

// describeHost tells what the host namespace's pods, claims and events
// say, when the virtual cluster does not come up.
func describeHost(ctx context.Context, host client.Client) string {
	var b strings.Builder
	var pods corev1.PodList
	_ = host.List(ctx, &pods, client.InNamespace(hostNamespace))
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s node=%q conditions=%v\n", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
		for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  container %s ready=%v restarts=%d state=%+v\n", s.Name, s.Ready, s.RestartCount, s.State)
		}
	}
	var pvcs corev1.PersistentVolumeClaimList
	_ = host.List(ctx, &pvcs, client.InNamespace(hostNamespace))
	for _, c := range pvcs.Items {
		fmt.Fprintf(&b, "claim %s: %s\n", c.Name, c.Status.Phase)
	}
	var events corev1.EventList
	_ = host.List(ctx, &events, client.InNamespace(hostNamespace))
	for _, e := range events.Items {
		fmt.Fprintf(&b, "event %s %s/%s: %s %s (x%d)\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
	}
	return b.String()
}

// syncerRestarts is the restart count of the control plane pod's syncer
// container, -1 when unknown.
func syncerRestarts(ctx context.Context, host client.Client) int32 {
	var pod corev1.Pod
	if err := host.Get(ctx, client.ObjectKey{Namespace: hostNamespace, Name: vclusterName + "-0"}, &pod); err != nil {
		return -1
	}
	for _, s := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if s.Name == "syncer" {
			return s.RestartCount
		}
	}
	return -1
}

// keepLogs copies, for a failed run, the syncer's log (this run's and the
// previous one's) and the host's and node's component logs next to the
// tests' home, which TestMain keeps on failure.
func keepLogs(t *testing.T, hostKubeconfig string) {
	dir := filepath.Dir(tests.Dir)
	cs, err := kubernetes.NewForConfig(restConfig(t, hostKubeconfig))
	if err == nil {
		for _, previous := range []bool{false, true} {
			data, err := cs.CoreV1().Pods(hostNamespace).GetLogs(vclusterName+"-0",
				&corev1.PodLogOptions{Container: "syncer", Previous: previous}).DoRaw(context.Background())
			if err != nil && !apierrors.IsBadRequest(err) {
				t.Logf("syncer log (previous %v): %v", previous, err)
				continue
			}
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("syncer-previous-%v.log", previous)), data, 0o644)
		}
	}
	for _, logs := range []string{filepath.Join(tests.Dir, "host", "kwok"), filepath.Join(tests.Dir, "host", "node", "logs")} {
		_ = exec.Command("cp", "-r", logs, filepath.Join(dir, "logs-"+filepath.Base(logs))).Run()
	}
	t.Logf("syncer and host logs kept in %s", dir)
}
