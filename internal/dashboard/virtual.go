package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/internal/virtual/inspect"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// VirtualSelector selects the control plane StatefulSets and pods of the
// virtual clusters a host runs: the label charts/virtual-cluster (like
// vCluster's chart) gives them.
const VirtualSelector = "app=vcluster"

// DriverVirtual is the driver column of a virtual cluster.
const DriverVirtual = "virtual"

// maxSyncEvents bounds the sync errors and policy refusals a virtual
// cluster's page lists, newest first.
const maxSyncEvents = 50

// virtualTimeout bounds each call to a virtual cluster's API server, so a
// virtual cluster that is down does not hold its page.
const virtualTimeout = 10 * time.Second

// summarizeVirtual is the control plane StatefulSet sts of a virtual
// cluster, with its pod (nil when missing or unknown), as a row of the
// clusters table at now.
func summarizeVirtual(sts *appsv1.StatefulSet, pod *corev1.Pod, now time.Time) clusterRow {
	status, reason := deploy.Status(sts, pod)
	r := clusterRow{Name: sts.Name, Namespace: sts.Namespace, Driver: DriverVirtual, Phase: status, Version: deploy.ImageTag(sts), Pools: -1,
		Link: virtualLink(sts.Namespace, sts.Name), created: sts.CreationTimestamp.Time, Age: duration.HumanDuration(now.Sub(sts.CreationTimestamp.Time))}
	if reason != "" {
		r.Problems = []string{status + ": " + reason}
	}
	return r
}

// virtualLink is the page of virtual cluster name of host namespace ns.
func virtualLink(ns, name string) string {
	return "/virtual/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// visibleVirtual lists, with the user's token, the virtual clusters of the
// management cluster (their control plane StatefulSets, in every
// namespace) as rows; note says why none are shown when the user may not
// list them.
func (s *Server) visibleVirtual(ctx context.Context, sess *session) (rows []clusterRow, note string, err error) {
	sel := metav1.ListOptions{LabelSelector: VirtualSelector}
	sts, err := sess.kube.AppsV1().StatefulSets("").List(ctx, sel)
	if apierrors.IsForbidden(err) {
		return nil, "Virtual clusters are not shown: your account may not list StatefulSets in every namespace (RBAC).", nil
	}
	if err != nil {
		return nil, "", err
	}
	pods := map[string]*corev1.Pod{}
	list, podsErr := sess.kube.CoreV1().Pods("").List(ctx, sel)
	if podsErr == nil {
		for i := range list.Items {
			p := &list.Items[i]
			pods[p.Namespace+"/"+p.Name] = p
		}
	}
	for i := range sts.Items {
		st := &sts.Items[i]
		r := summarizeVirtual(st, pods[st.Namespace+"/"+deploy.PodName(st.Name)], s.now())
		if podsErr != nil { // pods not readable: the StatefulSet alone
			r.Phase, r.Problems = deploy.StatusUnknown, []string{"your account may not list its pod"}
		}
		rows = append(rows, r)
	}
	return rows, "", nil
}

// virtualData is a virtual cluster's page.
type virtualData struct {
	Row clusterRow
	// Connect is the command that connects kubectl to it.
	Connect string
	// Kubeconfig is the download's URL, "" when the user may not read
	// the kubeconfig Secret vc-NAME.
	Kubeconfig string
	// Server is the server the kubeconfig names.
	Server string
	// KubernetesVersion is the virtual API server's, when reached.
	KubernetesVersion string
	// Namespace is the virtual namespace shown; Namespaces all of them.
	Namespace  string
	Namespaces []string
	// HostNamespace is where its objects are synced to.
	HostNamespace string
	Objects       []inspect.Row
	// Note says why the objects (and sync errors) are not shown.
	Note string
	// SyncErrors are the virtual cluster's Warning events of the syncer:
	// SyncError (the host refused a copy) and PolicyEnforced (an isolation
	// rule changed it), newest first.
	SyncErrors []eventRow
	// HostEvents are the Warning events of its control plane pod on the
	// host (a failing container's message), newest first.
	HostEvents []eventRow
}

// virtualPage shows virtual cluster {name} of host namespace {namespace}:
// its state, the connect command, the kubeconfig download (for a user who
// may read Secret vc-NAME), the objects of virtual namespace ?ns=
// (default "default") next to their host copies, and its sync errors.
func (s *Server) virtualPage(w http.ResponseWriter, r *http.Request, sess *session) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	ctx := r.Context()
	sts, err := sess.kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		status := http.StatusBadGateway
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			status = http.StatusNotFound
		}
		s.render(w, "virtual.html", status, page{Title: name, User: sess.user, CSRF: sess.csrf,
			Error: fmt.Sprintf("virtual cluster %s/%s: not found, or your account may not read it", ns, name)})
		return
	}
	pod, err := sess.kube.CoreV1().Pods(ns).Get(ctx, deploy.PodName(name), metav1.GetOptions{})
	if err != nil {
		pod = nil
	}
	d := virtualData{Row: summarizeVirtual(sts, pod, s.now()), HostNamespace: ns, Namespace: r.URL.Query().Get("ns"),
		Connect: "clustersync virtual connect " + name + " -n " + ns}
	if d.Namespace == "" {
		d.Namespace = "default"
	}
	if pod != nil {
		d.HostEvents, _ = events(ctx, sess.kube, ns, "regarding.name="+pod.Name,
			func(e eventsv1.Event) bool { return e.Type == corev1.EventTypeWarning }, 0, s.now())
	}
	s.readVirtual(ctx, sess, &d)
	s.render(w, "virtual.html", http.StatusOK, page{Title: name, User: sess.user, CSRF: sess.csrf, Data: d})
}

// readVirtual fills d with what the virtual cluster holds, read with its
// kubeconfig (Secret vc-NAME), which the user must be allowed to read;
// otherwise d.Note says why nothing is shown.
func (s *Server) readVirtual(ctx context.Context, sess *session, d *virtualData) {
	name, ns := d.Row.Name, d.Row.Namespace
	kc, err := deploy.Kubeconfig(ctx, sess.kube, name, ns, "")
	if err != nil {
		d.Note = fmt.Sprintf("Its objects are not shown: your account may not read Secret %s/%s, its kubeconfig (RBAC).", ns, controlplane.KubeconfigSecretName(name))
		if !apierrors.IsForbidden(err) {
			d.Note = "Its objects are not shown: " + err.Error()
		}
		return
	}
	d.Kubeconfig = virtualLink(ns, name) + "/kubeconfig"
	if cfg, err := clientcmd.Load(kc); err == nil {
		if cur := cfg.Contexts[cfg.CurrentContext]; cur != nil && cfg.Clusters[cur.Cluster] != nil {
			d.Server = cfg.Clusters[cur.Cluster].Server
		}
	}
	if d.Row.Phase != deploy.StatusRunning {
		d.Note = "Its objects are shown once it is Running."
		return
	}
	cfg, err := s.virtualConfig(ctx, sess, name, ns, kc)
	if err != nil {
		d.Note = "Its objects are not shown: " + err.Error()
		return
	}
	server := cfg.Host
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		d.Note = "Its objects are not shown: " + err.Error()
		return
	}
	vc, err := client.New(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper})
	if err != nil {
		d.Note = "Its objects are not shown: " + err.Error()
		return
	}
	if v, err := kube.Discovery().ServerVersion(); err == nil {
		d.KubernetesVersion = v.GitVersion
	}
	nss, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		d.Note = fmt.Sprintf("Its objects are not shown: its API server at %s: %v", server, err)
		return
	}
	for _, n := range nss.Items {
		d.Namespaces = append(d.Namespaces, n.Name)
	}
	tr := translate.Translator{VCluster: name, HostNamespace: ns}
	if d.Objects, err = inspect.Namespace(ctx, vc, sess.client, tr, d.Namespace); err != nil {
		d.Note = "Its objects are not shown: " + err.Error()
	}
	d.SyncErrors, _ = events(ctx, kube, "", "", isSyncEvent, maxSyncEvents, s.now()) // none when they cannot be listed
}

// virtualConfig reaches virtual cluster name of host namespace ns with
// kubeconfig kc (its Secret's) at the server the dashboard reaches it at
// (virtualServer).
func (s *Server) virtualConfig(ctx context.Context, sess *session, name, ns string, kc []byte) (*rest.Config, error) {
	server, err := s.virtualServer(ctx, sess.kube, name, ns)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, fmt.Errorf("Secret %s/%s: %w", ns, controlplane.KubeconfigSecretName(name), err)
	}
	cfg.Host, cfg.Timeout = server, virtualTimeout
	return cfg, nil
}

// virtualServer is where the dashboard reaches the API server of virtual
// cluster name: Options.VirtualServer, else its host Service's cluster IP
// (the manager runs in the host).
func (s *Server) virtualServer(ctx context.Context, kube kubernetes.Interface, name, ns string) (string, error) {
	if s.opts.VirtualServer != nil {
		return s.opts.VirtualServer(ctx, name, ns)
	}
	return deploy.ServiceServer(ctx, kube, name, ns)
}

// isSyncEvent reports whether e is one of the syncer's: SyncError (the
// host refused a copy) or PolicyEnforced (an isolation rule changed it).
func isSyncEvent(e eventsv1.Event) bool {
	return e.Reason == syncer.ReasonSyncError || e.Reason == syncer.ReasonPolicyEnforced
}

// virtualKubeconfig downloads the kubeconfig of virtual cluster {name} of
// host namespace {namespace} (Secret vc-NAME's key config, read with the
// user's token: 403 when RBAC refuses it).
func (s *Server) virtualKubeconfig(w http.ResponseWriter, r *http.Request, sess *session) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	kc, err := deploy.Kubeconfig(r.Context(), sess.kube, name, ns, "")
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	writeKubeconfig(w, "vcluster-"+name+"-"+ns+".yaml", kc)
}

// Form fields of the service account kubeconfig (POST
// /virtual/NAMESPACE/NAME/kubeconfig), `virtual connect`'s flags.
const (
	formServiceAccount  = "serviceAccount"
	formClusterRole     = "clusterRole"
	formTokenExpiration = "tokenExpiration"
)

// serviceAccountKubeconfig downloads a kubeconfig of virtual cluster
// {name} of host namespace {namespace} that authenticates with a token of
// a service account of it, as `virtual connect --service-account`
// (deploy.ServiceAccountKubeconfig): form fields serviceAccount
// ([NAMESPACE/]NAME), clusterRole (creates and binds the account) and
// tokenExpiration (seconds; empty: 10 years). It needs the user to read
// Secret vc-NAME (403 otherwise): what the admin kubeconfig may do in the
// virtual cluster is done with it. Bad input is a 400 naming the field.
func (s *Server) serviceAccountKubeconfig(w http.ResponseWriter, r *http.Request, sess *session) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	o := deploy.ServiceAccountOptions{Ref: strings.TrimSpace(r.PostFormValue(formServiceAccount)), ClusterRole: strings.TrimSpace(r.PostFormValue(formClusterRole))}
	if o.Ref == "" {
		http.Error(w, "Service account: give [NAMESPACE/]NAME", http.StatusBadRequest)
		return
	}
	if _, _, err := deploy.ParseServiceAccount(o.Ref); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if v := strings.TrimSpace(r.PostFormValue(formTokenExpiration)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			http.Error(w, fmt.Sprintf("Token expiration %q: want a number of seconds above 0", v), http.StatusBadRequest)
			return
		}
		o.Expiration = time.Duration(n) * time.Second
	}
	ctx := r.Context()
	kc, err := deploy.Kubeconfig(ctx, sess.kube, name, ns, "")
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	cfg, err := s.virtualConfig(ctx, sess, name, ns, kc)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	virtual, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out, err := deploy.ServiceAccountKubeconfig(ctx, io.Discard, virtual, kc, o)
	switch {
	case errors.Is(err, deploy.ErrServiceAccountMissing):
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	account := strings.ReplaceAll(o.Ref, "/", "-")
	writeKubeconfig(w, "vcluster-"+name+"-"+ns+"-"+account+".yaml", out)
}

// writeKubeconfig answers with kubeconfig kc as a download named file,
// never cached.
func writeKubeconfig(w http.ResponseWriter, file string, kc []byte) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", file))
	_, _ = w.Write(kc)
}
