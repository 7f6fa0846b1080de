package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// clusterRow is one line of the clusters table: a Cluster, or a virtual
// cluster (with its host namespace).
type clusterRow struct {
	Name, Driver, Phase, Version, Age string
	// Namespace is a virtual cluster's host namespace; "" for a Cluster.
	Namespace string
	// Pools counts the node groups (pools) the cloud reports; -1 when the
	// driver has none (a registered cluster).
	Pools int
	// Problems are the conditions that do not hold, "Type: message",
	// Conflict first.
	Problems []string
	// Conflict is true while a field is changed on both sides.
	Conflict bool
	// Hosted is true for an EKS, AKS or GKE cluster (its page has the
	// effective state).
	Hosted bool
	// Link is the cluster's page, "" when it has none.
	Link    string
	created time.Time
}

// summarize is c as a row of the clusters table at now; hosted is c seen
// through its cloud (ok false for a registered Cluster).
func summarize(c *mgmtv1.Cluster, hosted management.View, ok bool, now time.Time) clusterRow {
	r := clusterRow{Name: c.Name, Driver: c.Status.Driver, Phase: c.Status.Phase, Version: c.Status.Version, Pools: -1,
		created: c.CreationTimestamp.Time, Age: duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))}
	switch {
	case ok:
		r.Hosted, r.Link, r.Driver = true, clusterLink(c.Name), hosted.Driver()
		if n, known := hosted.NodePools(); known {
			r.Pools = n
		}
	case c.Spec.ImportedConfig != nil:
		r.Driver, r.Link = mgmtv1.DriverImported, clusterLink(c.Name)
	}
	for _, cond := range c.Status.Conditions {
		bad := cond.Status != metav1.ConditionTrue
		if cond.Type == mgmtv1.ConditionConflict {
			bad = cond.Status == metav1.ConditionTrue
			r.Conflict = bad
		}
		if !bad || cond.Message == "" && cond.Reason == "" {
			continue
		}
		msg := cond.Type + ": " + cmp.Or(cond.Message, cond.Reason)
		if cond.Type == mgmtv1.ConditionConflict {
			r.Problems = append([]string{msg}, r.Problems...)
		} else {
			r.Problems = append(r.Problems, msg)
		}
	}
	return r
}

// clusterLink is the page of Cluster name.
func clusterLink(name string) string { return "/clusters/" + url.PathEscape(name) }

// Key names the row in the table (its data-cluster attribute): a
// Cluster's name, a virtual cluster's "NAMESPACE/NAME".
func (r clusterRow) Key() string {
	if r.Namespace != "" {
		return r.Namespace + "/" + r.Name
	}
	return r.Name
}

// row is summarize of c with its cloud (s.hosted).
func (s *Server) row(c *mgmtv1.Cluster) clusterRow {
	v, ok := s.hosted(c)
	return summarize(c, v, ok, s.now())
}

// sortKeys are the columns the clusters table sorts by (?sort=).
var sortKeys = []string{"name", "driver", "phase", "age"}

// filterSort keeps the rows whose name, namespace, driver or phase
// contains q (case insensitive) and sorts them by key (name when key is unknown); rows in
// Conflict come first whatever the key.
func filterSort(rows []clusterRow, q, key string) []clusterRow {
	q = strings.ToLower(strings.TrimSpace(q))
	out := slices.DeleteFunc(slices.Clone(rows), func(r clusterRow) bool {
		return q != "" && !strings.Contains(strings.ToLower(r.Name+" "+r.Namespace+" "+r.Driver+" "+r.Phase), q)
	})
	field := func(r clusterRow) string {
		switch key {
		case "driver":
			return r.Driver + "\x00" + r.Key()
		case "phase":
			return r.Phase + "\x00" + r.Key()
		case "age":
			return r.created.UTC().Format(time.RFC3339Nano) + "\x00" + r.Key()
		}
		return r.Name + "\x00" + r.Namespace
	}
	slices.SortStableFunc(out, func(a, b clusterRow) int {
		if a.Conflict != b.Conflict {
			if a.Conflict {
				return -1
			}
			return 1
		}
		return strings.Compare(field(a), field(b))
	})
	return out
}

// tableData is the clusters table template's data.
type tableData struct {
	Rows []clusterRow
	// Notes say what the user's RBAC keeps off the table.
	Notes []string
	Query string
	Sort  string
	Sorts []string
	// Events is the URL of the live updates, with the same query.
	Events string
}

// visibleClusters lists the Clusters the user may see: with the user's
// own list when RBAC allows it; otherwise (a user allowed some Clusters by
// name, which Kubernetes RBAC cannot allow to list) the manager's list,
// keeping only those a SelfSubjectAccessReview with the user's token
// allows to get. rv is the list's resourceVersion, where a watch of the
// changes after it starts.
func (s *Server) visibleClusters(ctx context.Context, sess *session) (items []mgmtv1.Cluster, rv string, err error) {
	var list mgmtv1.ClusterList
	err = sess.client.List(ctx, &list)
	if err == nil || !apierrors.IsForbidden(err) {
		return list.Items, list.ResourceVersion, err
	}
	forbidden := err
	if err := s.admin.List(ctx, &list); err != nil {
		return nil, "", err
	}
	for _, c := range list.Items {
		ok, err := sess.may(ctx, "get", c.Name)
		if err != nil {
			return nil, "", err
		}
		if ok {
			items = append(items, c)
		}
	}
	if len(items) == 0 {
		return nil, "", forbidden
	}
	return items, list.ResourceVersion, nil
}

// table lists the Clusters and virtual clusters the user may see, as the
// table fragment's data. The error is the Clusters list's when the user
// may see neither.
func (s *Server) table(ctx context.Context, sess *session, q, key string) (tableData, error) {
	items, rv, listErr := s.visibleClusters(ctx, sess)
	var notes []string
	switch {
	case noClusterCRD(listErr):
		// A host with virtual clusters only (`clustersync demo`).
		notes, listErr = append(notes, "Hosted and registered clusters are not shown: this cluster has no Cluster CRD (clusters."+mgmtv1.GroupVersion.Group+"), which `clustersync manager` installs."), nil
	case listErr != nil && !apierrors.IsForbidden(listErr):
		return tableData{}, listErr
	}
	rows, note, err := s.visibleVirtual(ctx, sess)
	if err != nil {
		return tableData{}, err
	}
	if listErr != nil && len(rows) == 0 {
		return tableData{}, listErr
	}
	if listErr != nil {
		notes = append(notes, listError(listErr))
	}
	if note != "" {
		notes = append(notes, note)
	}
	for i := range items {
		rows = append(rows, s.row(&items[i]))
	}
	v := url.Values{}
	if q != "" {
		v.Set("q", q)
	}
	if key != "" {
		v.Set("sort", key)
	}
	v.Set("rv", rv)
	ev := "/events?" + v.Encode()
	return tableData{Rows: filterSort(rows, q, key), Notes: notes, Query: q, Sort: key, Sorts: sortKeys, Events: ev}, nil
}

// noClusterCRD reports whether err says the management cluster does not
// serve Clusters: its CRD is not installed.
func noClusterCRD(err error) bool {
	return err != nil && (apierrors.IsNotFound(err) || meta.IsNoMatchError(err))
}

// listError is what a page says when the user may not list Clusters.
func listError(err error) string {
	if apierrors.IsForbidden(err) {
		return "Your account may not list clusters (RBAC): ask for list and watch on clusters.management.clustersync.io."
	}
	return err.Error()
}

func (s *Server) clustersPage(w http.ResponseWriter, r *http.Request, sess *session) {
	data, err := s.table(r.Context(), sess, r.URL.Query().Get("q"), r.URL.Query().Get("sort"))
	p := page{Title: "Clusters", User: sess.user, CSRF: sess.csrf, Data: data}
	if err != nil {
		p.Error = listError(err)
		if !apierrors.IsForbidden(err) {
			s.render(w, "clusters.html", http.StatusBadGateway, p)
			return
		}
		p.Data = tableData{Sorts: sortKeys, Events: "/events"}
		s.render(w, "clusters.html", http.StatusForbidden, p)
		return
	}
	s.render(w, "clusters.html", http.StatusOK, p)
}

// clusterEvents streams the clusters table as server-sent events (event
// "clusters", the table's HTML): at once, then after every change the
// user's watch on Clusters reports.
func (s *Server) clusterEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	q, key := r.URL.Query().Get("q"), r.URL.Query().Get("sort")
	s.follow(w, r, func(ctx context.Context, rv string) ([]watch.Interface, error) {
		wi, err := sess.client.Watch(ctx, &mgmtv1.ClusterList{}, from(rv))
		if apierrors.IsForbidden(err) {
			// A user allowed Clusters by name only: the manager watches, and
			// every table sent is filtered with the user's access (table).
			wi, err = s.admin.Watch(ctx, &mgmtv1.ClusterList{}, from(rv))
		}
		var ws []watch.Interface
		switch {
		case err == nil:
			ws = append(ws, wi)
		case !noClusterCRD(err):
			return nil, err
		}
		// The virtual clusters' control planes, from now: the watches the
		// user may not make are left out.
		sel := metav1.ListOptions{LabelSelector: VirtualSelector}
		if w, err := sess.kube.AppsV1().StatefulSets("").Watch(ctx, sel); err == nil {
			ws = append(ws, w)
		}
		if w, err := sess.kube.CoreV1().Pods("").Watch(ctx, sel); err == nil {
			ws = append(ws, w)
		}
		return ws, nil
	}, func(st *stream) bool {
		data, err := s.table(ctx, sess, q, key)
		if err != nil {
			st.event("error", listError(err))
			return !apierrors.IsForbidden(err)
		}
		return st.template(s.pages["clusters.html"], "clusters", "table", data)
	})
}

// clusterDetailEvents streams a hosted cluster's page body as server-sent
// events (event "cluster"): at once, then after every change of the
// Cluster or a new event about it, as the user's watches report them.
func (s *Server) clusterDetailEvents(w http.ResponseWriter, r *http.Request, sess *session) {
	name := r.PathValue("name")
	ctx := r.Context()
	s.follow(w, r, func(ctx context.Context, rv string) ([]watch.Interface, error) {
		wc, err := sess.client.Watch(ctx, &mgmtv1.ClusterList{}, client.MatchingFields{"metadata.name": name}, from(rv))
		if err != nil {
			return nil, err
		}
		out := []watch.Interface{wc}
		if we, err := sess.kube.EventsV1().Events("").Watch(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + name}); err == nil {
			out = append(out, we) // events the user may not watch are left out
		}
		return out, nil
	}, func(st *stream) bool {
		var c mgmtv1.Cluster
		if err := sess.client.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
			st.event("error", fmt.Sprintf("cluster %s: %v", name, err))
			return false
		}
		return st.template(s.pages["cluster.html"], "cluster", "detail", s.detail(ctx, sess, &c))
	})
}

// stream is one server-sent event stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html).
type stream struct {
	w http.ResponseWriter
	f http.Flusher
}

// event sends event name with data (one data line per line).
func (st *stream) event(name, data string) {
	fmt.Fprintf(st.w, "event: %s\n", name)
	for _, line := range strings.Split(strings.TrimRight(data, "\n"), "\n") {
		fmt.Fprintf(st.w, "data: %s\n", line)
	}
	fmt.Fprint(st.w, "\n")
	st.f.Flush()
}

// template sends event name with the HTML of template def of t; false
// when it does not render.
func (st *stream) template(t *template.Template, name, def string, data any) bool {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, def, data); err != nil {
		st.event("error", err.Error())
		return false
	}
	st.event(name, buf.String())
	return true
}

// keepAlive is how often an idle event stream sends a comment, so that
// proxies keep it open.
const keepAlive = 25 * time.Second

// from is a watch option starting after resourceVersion rv ("": now).
func from(rv string) client.ListOption {
	return &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}}
}

// follow serves an event stream: send after every change the watches
// report (changes within debounce sent once), until the client goes or
// send returns false. The request's ?rv= is the resourceVersion the page
// was rendered at: the first watches start there, so no change is missed
// and nothing is sent before one happens; without it (or once it is too
// old, or a watch ended) send runs at once and the watches start now.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, watches func(ctx context.Context, rv string) ([]watch.Interface, error), send func(*stream) bool) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	st := &stream{w: w, f: flusher}
	ctx := r.Context()
	rv := r.URL.Query().Get("rv")
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for ctx.Err() == nil {
		if rv == "" && !send(st) {
			return
		}
		ws, err := watches(ctx, rv)
		if rv != "" && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) {
			rv = ""
			continue
		}
		rv = ""
		if err != nil {
			st.event("error", listError(err))
			return
		}
		changed := watchChanges(ctx, ws)
		done := false
		for !done {
			select {
			case <-ctx.Done():
				done = true
			case <-tick.C:
				fmt.Fprint(w, ": keep-alive\n\n")
				flusher.Flush()
			case _, open := <-changed:
				switch {
				case !open:
					done = true
				case !send(st):
					stopAll(ws)
					return
				}
			}
		}
		stopAll(ws)
	}
	if errors.Is(context.Cause(ctx), errSessionEnded) {
		st.event("error", errSessionEnded.Error())
	}
}

func stopAll(ws []watch.Interface) {
	for _, w := range ws {
		w.Stop()
	}
}

// clusterPage shows one hosted cluster: its effective state, conflicts
// with their three values, conditions and events.
func (s *Server) clusterPage(w http.ResponseWriter, r *http.Request, sess *session) {
	name := r.PathValue("name")
	var c mgmtv1.Cluster
	if err := sess.client.Get(r.Context(), client.ObjectKey{Name: name}, &c); err != nil {
		status := http.StatusBadGateway
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			status = http.StatusNotFound // not telling apart "absent" from "not yours"
		}
		s.render(w, "cluster.html", status, page{Title: name, User: sess.user, CSRF: sess.csrf,
			Error: fmt.Sprintf("cluster %s: not found, or your account may not read it", name)})
		return
	}
	d := s.detail(r.Context(), sess, &c)
	s.render(w, "cluster.html", http.StatusOK, page{Title: name, User: sess.user, CSRF: sess.csrf, Data: d})
}

// detailData is a cluster's page: a hosted cluster's effective state and
// conflicts; for a cluster with the agent (registered, or hosted with the
// agent the manager installs) its agent, members, projects, capabilities,
// K3s state and, when it is to be run by hand, the registration command;
// conditions and events for all.
type detailData struct {
	Row clusterRow
	// Agent is set for a cluster that has (or is to have) the agent.
	Agent     *agentData
	Rows      []managed.Row
	Conflicts []hostedv1.FieldConflict
	// Keeping are the paths of the conflicts the user answered "keep my
	// value" (the Cluster's annotation clustersync.io/keep-config), whose
	// push is on its way.
	Keeping    map[string]bool
	Conditions []metav1.Condition
	Events     []eventRow
	// EventsError says why events are not shown (RBAC).
	EventsError string
	Endpoint    string
	// CSRF is the session's token, for the conflict forms.
	CSRF string
	// Stream is the URL of the page's live updates, from the Cluster's
	// resourceVersion.
	Stream string
}

// eventRow is one event on a page: how long ago it last happened, its
// type, reason and note, and the object it is about ("Kind ns/name").
type eventRow struct{ Age, Type, Reason, Note, Object string }

// events lists with kube the events of namespace ns ("" for all) that
// match fieldSelector ("" for all) and keep accepts, newest first, at most
// limit of them (0 for all), as rows at now. Errors are the API's.
func events(ctx context.Context, kube kubernetes.Interface, ns, fieldSelector string, keep func(eventsv1.Event) bool, limit int, now time.Time) ([]eventRow, error) {
	evs, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return nil, err
	}
	items := slices.DeleteFunc(evs.Items, func(e eventsv1.Event) bool { return !keep(e) })
	slices.SortFunc(items, func(a, b eventsv1.Event) int { return eventTime(b).Compare(eventTime(a)) })
	if limit > 0 {
		items = items[:min(len(items), limit)]
	}
	rows := make([]eventRow, 0, len(items))
	for _, e := range items {
		rows = append(rows, eventRow{Age: duration.HumanDuration(now.Sub(eventTime(e))), Type: e.Type, Reason: e.Reason, Note: e.Note,
			Object: e.Regarding.Kind + " " + e.Regarding.Namespace + "/" + e.Regarding.Name})
	}
	return rows, nil
}

func (s *Server) detail(ctx context.Context, sess *session, c *mgmtv1.Cluster) detailData {
	d := detailData{Row: s.row(c), Conditions: c.Status.Conditions, Endpoint: c.Status.APIEndpoint, CSRF: sess.csrf,
		Stream: "/clusters/" + url.PathEscape(c.Name) + "/events?rv=" + url.QueryEscape(c.ResourceVersion)}
	if v, ok := s.hosted(c); ok {
		d.Rows, d.Conflicts = v.Rows(), v.Conflicts()
		d.Keeping = keeping(c.Annotations, d.Conflicts)
	}
	if c.AgentWanted() {
		d.Agent = s.agent(ctx, sess, c)
	}
	var err error
	d.Events, err = events(ctx, sess.kube, "", "regarding.name="+c.Name, func(e eventsv1.Event) bool { return e.Regarding.Kind == "Cluster" }, 0, s.now())
	if err != nil {
		d.EventsError = "events are not shown: " + listError(err)
	}
	return d
}

// keeping returns the paths of conflicts a Cluster's annotations answer
// "keep my value" (engine.KeepAnnotation, with the conflict's values); nil
// for none, or an annotation that does not parse.
func keeping(annotations map[string]string, conflicts []hostedv1.FieldConflict) map[string]bool {
	keeps, _ := engine.KeepsOf(annotations)
	var out map[string]bool
	for _, cf := range conflicts {
		if keeps.Answers(cf) {
			if out == nil {
				out = map[string]bool{}
			}
			out[cf.Path] = true
		}
	}
	return out
}

// eventTime is when an event last happened.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// answer answers a conflict with a (management.Resolve, with the user's
// identity; the CLI's `clustersync cluster resolve` shares it):
// management.Take sets the field's value in spec.<provider>Config to the
// upstream value the conflict recorded, as a user would with kubectl
// edit, and the engine then sees config and cloud agree;
// management.Keep records the conflict's values in the Cluster's
// annotation clustersync.io/keep-config, and the engine pushes the user's
// value over the cloud's. Either redirects to the cluster's page (a form
// posted by htmx gets 204: the page follows the change by its events); a
// conflict gone (or a field edited since) is a 409.
func (s *Server) answer(a management.Answer) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, sess *session) {
		name, path := r.PathValue("name"), r.PostFormValue("path")
		if _, err := management.Resolve(r.Context(), sess.client, s.hosted, name, path, a); err != nil {
			http.Error(w, err.Error(), answerStatus(err))
			return
		}
		if r.Header.Get("HX-Request") == "true" {
			w.WriteHeader(http.StatusNoContent) // the page follows the change by its events
			return
		}
		http.Redirect(w, r, "/clusters/"+url.PathEscape(name), http.StatusSeeOther)
	}
}

// answerStatus is the HTTP status of management.Resolve's error: 409 for
// no conflict, 400 for a Cluster of no cloud, an API error's own
// (statusOf), 400 for the rest (a path that names no field).
func answerStatus(err error) int {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, management.ErrNoConflict):
		return http.StatusConflict
	case errors.Is(err, management.ErrNotHosted):
		return http.StatusBadRequest
	case errors.As(err, &status):
		return statusOf(err)
	}
	return http.StatusBadRequest
}

// statusOf is the HTTP status of an API error, wrapped or not.
func statusOf(err error) int {
	var s apierrors.APIStatus
	if errors.As(err, &s) && s.Status().Code != 0 {
		return int(s.Status().Code)
	}
	return http.StatusBadGateway
}

// debounce is how long changes are gathered before the table is sent
// again.
const debounce = 200 * time.Millisecond

// watchChanges turns the events of watches into signals, changes within
// debounce coalesced into one; the channel closes when any watch ends.
func watchChanges(ctx context.Context, ws []watch.Interface) <-chan struct{} {
	events := make(chan struct{})
	ended := make(chan struct{})
	for _, w := range ws {
		go func() {
			for range w.ResultChan() {
				select {
				case events <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ended <- struct{}{}:
			case <-ctx.Done():
			}
		}()
	}
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ended:
				return
			case <-events:
			}
			timer := time.NewTimer(debounce)
		gather:
			for {
				select {
				case <-ctx.Done():
					timer.Stop()
					return
				case <-ended:
					timer.Stop()
					return
				case <-events:
				case <-timer.C:
					break gather
				}
			}
			select {
			case out <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// agentData is what the page of a cluster with the agent shows beyond the
// conditions and events.
type agentData struct {
	// Import is whether the registration command is shown: always for a
	// registered cluster, for a hosted one when the manager cannot install
	// the agent itself (a private endpoint: condition AgentConnected,
	// reason RegistrationRequired). Private tells the latter.
	Import, Private bool
	// Command and InsecureCommand import the cluster (the registration
	// token's status, as `clustersync cluster import` prints them); empty
	// while the token is not issued or the user may not read it.
	Command, InsecureCommand string
	// TokenError says why the commands are not shown.
	TokenError string
	// Role is the user's role in the cluster (its members), "" for none:
	// only members get a kubeconfig.
	Role string
	// Status is what the agent reported (status.agent); nil before it
	// connected.
	Status   *mgmtv1.AgentStatus
	Members  []mgmtv1.ClusterMember
	Projects []mgmtv1.Project
	// Capabilities are the detected capabilities, as "name: value".
	Capabilities []string
	K3s          *mgmtv1.K3sStatus
	K3sWanted    string
}

// agent reads, with the user's identity, the registration token
// (namespace clustersync-global-data, named after the cluster) and the
// projects of a cluster with the agent; what the user may not read is
// left out.
func (s *Server) agent(ctx context.Context, sess *session, c *mgmtv1.Cluster) *agentData {
	r := &agentData{Status: c.Status.Agent, Members: c.Members(), K3s: c.Status.K3s,
		Role: server.MemberRole(c, sess.user, sess.groups)}
	r.Private = controller.RegistrationRequired(c)
	r.Import = c.Spec.ImportedConfig != nil || r.Private
	if c.Spec.K3sConfig != nil {
		r.K3sWanted = c.Spec.K3sConfig.KubernetesVersion
	}
	var tok mgmtv1.ClusterRegistrationToken
	switch err := sess.client.Get(ctx, client.ObjectKey{Namespace: hostedv1.Namespace, Name: c.Name}, &tok); {
	case apierrors.IsForbidden(err):
		r.TokenError = "Your account may not read this cluster's registration token, so the import command is not shown."
	case err != nil:
		r.TokenError = "The registration token is not issued yet: is the manager running with --serve-addr?"
	case tok.Status.Command == "":
		r.TokenError = "The registration token is not issued yet."
	default:
		r.Command, r.InsecureCommand = tok.Status.Command, tok.Status.InsecureCommand
	}
	var projects mgmtv1.ProjectList
	if err := sess.client.List(ctx, &projects); err == nil {
		for _, p := range projects.Items {
			if p.Spec.ClusterName == c.Name {
				r.Projects = append(r.Projects, p)
			}
		}
	}
	if cp := c.Status.Capabilities; cp != nil {
		add := func(name string, v any) { r.Capabilities = append(r.Capabilities, fmt.Sprintf("%s: %v", name, v)) }
		for _, ic := range cp.IngressCapabilities {
			add(mgmtv1.CapabilityIngress, ic.IngressProvider)
		}
		if lb := cp.LoadBalancerCapabilities; lb != nil && lb.Enabled != nil {
			add(mgmtv1.CapabilityLoadBalancer, *lb.Enabled)
		}
		if cp.NodePortRange != "" {
			add(mgmtv1.CapabilityNodePortRange, cp.NodePortRange)
		}
		if cp.TaintSupport != nil {
			add(mgmtv1.CapabilityTaintSupport, *cp.TaintSupport)
		}
		if cp.NodePoolScalingSupported != nil {
			add(mgmtv1.CapabilityNodePoolScaling, *cp.NodePoolScalingSupported)
		}
	}
	return r
}

// kubeconfigTTLs are the lives the cluster page offers a kubeconfig for,
// as Go durations.
func kubeconfigTTLs() []string { return []string{"1h", "8h", "24h", "168h", "720h"} }

// clusterKubeconfig downloads a kubeconfig of cluster {name} for the
// signed-in user, as `clustersync cluster kubeconfig` gets one
// (server.IssueKubeconfig): the manager's proxy, a token of the user's
// identity valid for form field ttl (a Go duration; default 8h). 400 for
// a bad ttl, 403 for a user who is not a member, 503 while no manager has
// published its URL (ConfigMap kube-public/clustersync-manager).
func (s *Server) clusterKubeconfig(w http.ResponseWriter, r *http.Request, sess *session) {
	name := r.PathValue("name")
	ttl, err := kubetoken.ParseTTL(r.PostFormValue("ttl"))
	if err != nil {
		http.Error(w, "Valid for: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	info, err := server.ReadInfo(ctx, s.review)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	issuer := &kubetoken.Issuer{Client: s.admin, Namespace: server.TokenNamespace}
	kc, _, err := server.IssueKubeconfig(ctx, s.admin, issuer, info.URL, info.CAPEM,
		kubetoken.User{Name: sess.user, UID: sess.uid, Groups: sess.groups}, name, ttl)
	var nm *server.NotMemberError
	switch {
	case errors.As(err, &nm):
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	writeKubeconfig(w, name+".yaml", kc)
}
