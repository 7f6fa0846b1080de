package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/registered"
)

// kindRegistered is the Add page's choice of a registered cluster; the
// other choices are the clouds' keys (management.Descriptor.Key).
const kindRegistered = "registered"

// option is one choice of a select.
type option struct{ Value, Label string }

// addKinds are the Add page's choices, in order: an import per cloud of
// the table, then a registered cluster.
func (s *Server) addKinds() []option {
	var out []option
	for _, d := range s.opts.Clouds {
		out = append(out, option{d.Key, d.Import.Title})
	}
	return append(out, option{kindRegistered, "Register any cluster (agent)"})
}

// addForm is what the Add form sends.
type addForm struct {
	// Kind is a cloud's key or kindRegistered.
	Kind string
	// Name is the Cluster's metadata.name; DisplayName its
	// spec.displayName (the name when empty).
	Name, DisplayName string
	// Values are the cloud's inputs (management.FormInput), by name.
	Values map[string]string
	// Credential is the credential Secret, "namespace:name".
	Credential string
	// Members are a registered cluster's members, one
	// [user:|group:|sa:]NAME=ROLE a line (as `cluster import --member`).
	Members string
}

// formOf reads the Add form of r (an unknown kind is the first cloud's).
func (s *Server) formOf(r *http.Request) addForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := addForm{Kind: s.knownKind(v("kind")), Name: v("name"), DisplayName: v("displayName"), Credential: v("credential"), Members: v("members")}
	if d, ok := s.cloud(f.Kind); ok {
		f.Values = map[string]string{}
		for _, in := range d.Import.Inputs {
			f.Values[in.Name] = v(in.Name)
		}
	}
	return f
}

// knownKind is k when the Add page knows it, else the first choice.
func (s *Server) knownKind(k string) string {
	kinds := s.addKinds()
	if slices.ContainsFunc(kinds, func(o option) bool { return o.Value == k }) {
		return k
	}
	return kinds[0].Value
}

// cloud returns the cloud of key; ok is false for none (a registered
// cluster).
func (s *Server) cloud(key string) (management.Descriptor, bool) {
	return management.ByKey(s.opts.Clouds, key)
}

// fieldError is a problem with the form: Input names the input it is
// about ("" for the form as a whole); Message names the Cluster's field.
type fieldError struct{ Input, Message string }

// buildCluster is the Cluster f asks for: a cluster of cloud d imported
// (imported: true, the credential Secret referenced as "namespace:name"),
// or, when f is of a registered cluster, a registered one
// (registered.Cluster, as `clustersync cluster import` makes it). The
// problems found before asking the API server (which checks the schema on
// the dry run and on create) are returned, one per input, each naming the
// Cluster's field.
func buildCluster(d management.Descriptor, f addForm) (*mgmtv1.Cluster, []fieldError) {
	var errs []fieldError
	bad := func(input, field, msg string) { errs = append(errs, fieldError{input, field + ": " + msg}) }
	required := func(input, field, v string) {
		if v == "" {
			bad(input, field, "required")
		}
	}
	required("name", "metadata.name", f.Name)
	if f.Name != "" {
		if msgs := validation.IsDNS1123Subdomain(f.Name); len(msgs) > 0 {
			bad("name", "metadata.name", strings.Join(msgs, "; "))
		}
	}
	credential := func(field string) {
		if f.Credential == "" {
			bad("credential", field, "required: choose a credential Secret")
		} else if _, err := access.CredentialRef(field, f.Credential); err != nil {
			errs = append(errs, fieldError{"credential", err.Error()})
		}
	}
	if d.Key == "" {
		var members []mgmtv1.ClusterMember
		for _, line := range strings.Split(f.Members, "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			m, err := registered.ParseMember(line)
			if err != nil {
				bad("members", "spec.members", strings.TrimPrefix(err.Error(), "--member "))
				continue
			}
			members = append(members, m)
		}
		return registered.Cluster(f.Name, members), errs
	}
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: f.Name}, Spec: mgmtv1.ClusterSpec{DisplayName: f.DisplayName}}
	if c.Spec.DisplayName == "" {
		c.Spec.DisplayName = f.Name
	}
	config := "spec." + d.ConfigField + "."
	for _, in := range d.Import.Inputs {
		required(in.Name, config+in.Fields[0], f.Values[in.Name])
	}
	credential(config + d.Import.CredentialField)
	d.Import.Config(c, f.Values, f.Credential)
	return c, errs
}

// causeInput is the input of the form of cloud d (none for a registered
// cluster) that field (of an API server's Invalid error) comes from; ""
// when none.
func causeInput(d management.Descriptor, field string) string {
	switch {
	case field == "metadata.name":
		return "name"
	case field == "spec.displayName":
		return "displayName"
	case strings.HasPrefix(field, "spec.members"), strings.HasPrefix(field, "spec.importedConfig.members"):
		return "members"
	case d.Key == "":
		return ""
	}
	config := "spec." + d.ConfigField + "."
	if field == config+d.Import.CredentialField {
		return "credential"
	}
	for _, in := range d.Import.Inputs {
		for _, f := range in.Fields {
			if field == config+f {
				return in.Name
			}
		}
	}
	return ""
}

// apiProblems are the problems an API error reports: an Invalid error's
// causes, each on its input; a name taken; else the error.
func apiProblems(d management.Descriptor, name string, err error) []fieldError {
	var st apierrors.APIStatus
	switch {
	case apierrors.IsAlreadyExists(err):
		return []fieldError{{"name", fmt.Sprintf("metadata.name: a cluster named %s exists; choose another name", name)}}
	case apierrors.IsForbidden(err):
		return []fieldError{{"", "Your account may not create clusters (RBAC): ask for create on clusters.management.clustersync.io. " + err.Error()}}
	case apierrors.IsInvalid(err) && errors.As(err, &st) && st.Status().Details != nil && len(st.Status().Details.Causes) > 0:
		var out []fieldError
		for _, c := range st.Status().Details.Causes {
			msg := c.Message
			if c.Field != "" && !strings.HasPrefix(msg, c.Field) {
				msg = c.Field + ": " + msg
			}
			out = append(out, fieldError{causeInput(d, c.Field), msg})
		}
		return out
	}
	return []fieldError{{"", err.Error()}}
}

// clusterYAML is c as the YAML the form applies: apiVersion and kind set,
// no status and no empty creationTimestamp.
func clusterYAML(c *mgmtv1.Cluster) (string, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return "", err
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	u["apiVersion"], u["kind"] = mgmtv1.GroupVersion.String(), "Cluster"
	b, err := yaml.Marshal(u)
	return string(b), err
}

// importCommand is `clustersync cluster import` with the same name and
// members as a registered cluster c.
func importCommand(c *mgmtv1.Cluster) string {
	cmd := "clustersync cluster import " + c.Name
	for _, m := range c.Members() {
		who := m.Name
		switch m.Kind {
		case "Group":
			who = "group:" + who
		case "ServiceAccount":
			who = "sa:" + who
		}
		cmd += " --member " + who + "=" + m.Role
	}
	return cmd
}

// formField is one input of the Add form.
type formField struct {
	// Name is the input's name (its id is "f-" + Name).
	Name, Label, Hint, Value, Placeholder string
	// Type is "text", "select" or "textarea".
	Type     string
	Required bool
	Options  []option
	// Error is the problem with the input ("" when none).
	Error string
}

// addData is the Add page's form.
type addData struct {
	Kinds        []option
	Form         addForm
	Title, Intro string
	Submit       string
	Fields       []formField
	CSRF         string
	Problems     []string
	// YAML is the Cluster the form applies, once previewed; Command is a
	// registered cluster's `clustersync cluster import` equivalent.
	YAML, Command string
}

// credentials lists the names of the Secrets in clustersync-global-data
// that no object owns (the ones users create, not the CA and token
// Secrets clustersync writes), metadata only: the values never leave the
// API server.
func credentials(ctx context.Context, sess *session) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := sess.client.List(ctx, list, client.InNamespace(hostedv1.Namespace)); err != nil {
		return nil, err
	}
	var names []string
	for _, o := range list.Items {
		if len(o.OwnerReferences) == 0 {
			names = append(names, o.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// fields are the inputs of f's kind — cloud d's, or a registered
// cluster's when d is zero — with f's values and the problems on them; creds are the credential Secrets' names (nil with credsErr when
// they may not be listed: the Secret is then typed in).
func fields(d management.Descriptor, f addForm, creds []string, credsErr error, problems []fieldError) []formField {
	name := formField{Name: "name", Label: "Name", Value: f.Name, Required: true,
		Hint: "The Cluster's name in clustersync: lowercase letters, digits, '-' and '.'."}
	display := formField{Name: "displayName", Label: "Display name", Value: f.DisplayName, Hint: "Shown to people; the name when empty."}
	cred := formField{Name: "credential", Label: "Credential Secret", Value: f.Credential, Type: "select", Required: true}
	ref := func(keys string) {
		cred.Hint = "A Secret of namespace " + hostedv1.Namespace + " with " + keys + ". Only names are listed: values are never read."
		if credsErr != nil {
			cred.Type, cred.Placeholder = "text", hostedv1.Namespace+":NAME"
			cred.Hint = "Your account may not list the Secrets of " + hostedv1.Namespace + ": type namespace:name. A Secret with " + keys + "."
			if !apierrors.IsForbidden(credsErr) {
				cred.Hint = "The Secrets of " + hostedv1.Namespace + " could not be listed (" + credsErr.Error() + "): type namespace:name. A Secret with " + keys + "."
			}
			return
		}
		for _, n := range creds {
			cred.Options = append(cred.Options, option{hostedv1.Namespace + ":" + n, n})
		}
		if len(creds) == 0 {
			cred.Hint = "No Secret in namespace " + hostedv1.Namespace + " yet: create one with " + keys + " (docs/hosted.md)."
		}
	}
	out := []formField{name, {Name: "members", Label: "Members", Value: f.Members, Type: "textarea", Placeholder: "alice=cluster-owner",
		Hint: "Optional, one a line: [user:|group:|sa:]NAME=ROLE, ROLE cluster-owner, cluster-member or read-only."}}
	if d.Key != "" {
		ref(d.Import.CredentialKeys)
		out = []formField{name, display}
		for _, in := range d.Import.Inputs {
			out = append(out, formField{Name: in.Name, Label: in.Label, Hint: in.Hint, Placeholder: in.Placeholder, Value: f.Values[in.Name], Required: true})
		}
		out = append(out, cred)
	}
	for i := range out {
		if out[i].Type == "" {
			out[i].Type = "text"
		}
		var msgs []string
		for _, p := range problems {
			if p.Input == out[i].Name {
				msgs = append(msgs, p.Message)
			}
		}
		out[i].Error = strings.Join(msgs, "; ")
	}
	return out
}

// texts are the title, introduction and submit label of the form of
// cloud d, or of a registered cluster's when d is zero.
func texts(d management.Descriptor) (title, intro, submit string) {
	if d.Key == "" {
		return "Register any cluster", "Creates a registered cluster (spec.importedConfig), as clustersync cluster import does. " +
			"Its page then shows the command to run against the cluster, once the manager issues its registration token (docs/registered.md).", "Register cluster"
	}
	return d.Import.Title, "Connects an existing " + d.Name + " cluster. It is imported (imported: true): clustersync never creates or deletes it " +
		"in the cloud, and every optional field starts unmanaged (docs/hosted.md).", "Import cluster"
}

// addData is the Add page's data for f: its inputs with the problems on
// them, and, when c is not nil, c's YAML (and a registered cluster's
// import command).
func (s *Server) addData(ctx context.Context, sess *session, f addForm, c *mgmtv1.Cluster, problems []fieldError) addData {
	creds, credsErr := credentials(ctx, sess)
	cloud, _ := s.cloud(f.Kind)
	d := addData{Kinds: s.addKinds(), Form: f, CSRF: sess.csrf, Fields: fields(cloud, f, creds, credsErr, problems)}
	d.Title, d.Intro, d.Submit = texts(cloud)
	for _, p := range problems {
		d.Problems = append(d.Problems, p.Message)
	}
	if c != nil {
		y, err := clusterYAML(c)
		if err != nil {
			d.Problems = append(d.Problems, err.Error())
		}
		d.YAML = y
		if c.Spec.ImportedConfig != nil {
			d.Command = importCommand(c)
		}
	}
	return d
}

// addPage is the Add page: GET /add?kind=KIND, a cloud's key (eks, aks,
// gke) or registered.
func (s *Server) addPage(w http.ResponseWriter, r *http.Request, sess *session) {
	f := addForm{Kind: s.knownKind(r.URL.Query().Get("kind"))}
	s.render(w, "add.html", http.StatusOK, page{Title: "Add a cluster", User: sess.user, CSRF: sess.csrf, Data: s.addData(r.Context(), sess, f, nil, nil)})
}

// preview is the Cluster the form asks for and its problems: the form's
// own, else the API server's answer to a dry-run create with the user's
// token (schema, names taken, RBAC).
func (s *Server) preview(ctx context.Context, sess *session, f addForm) (*mgmtv1.Cluster, []fieldError) {
	cloud, _ := s.cloud(f.Kind)
	c, problems := buildCluster(cloud, f)
	if len(problems) == 0 {
		if err := sess.client.Create(ctx, c.DeepCopy(), client.DryRunAll); err != nil {
			problems = apiProblems(cloud, f.Name, err)
		}
	}
	return c, problems
}

// addPreview answers htmx's POST /add/preview with the form, the YAML it
// would apply and its problems (status 200 either way, so that htmx swaps
// it in).
func (s *Server) addPreview(w http.ResponseWriter, r *http.Request, sess *session) {
	f := s.formOf(r)
	c, problems := s.preview(r.Context(), sess, f)
	s.renderFragment(w, "add.html", "addform", http.StatusOK, s.addData(r.Context(), sess, f, c, problems))
}

// addSubmit is POST /add: with action=preview (the form without
// JavaScript) the page with the YAML; else it creates the Cluster with the
// user's client and redirects to its page, or shows the form again with
// the problems (422, or the API error's status).
func (s *Server) addSubmit(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	f := s.formOf(r)
	p := page{Title: "Add a cluster", User: sess.user, CSRF: sess.csrf}
	if r.PostFormValue("action") == "preview" {
		c, problems := s.preview(ctx, sess, f)
		p.Data = s.addData(ctx, sess, f, c, problems)
		s.render(w, "add.html", http.StatusOK, p)
		return
	}
	cloud, _ := s.cloud(f.Kind)
	c, problems := buildCluster(cloud, f)
	if len(problems) > 0 {
		p.Data = s.addData(ctx, sess, f, nil, problems)
		s.render(w, "add.html", http.StatusUnprocessableEntity, p)
		return
	}
	if err := sess.client.Create(ctx, c); err != nil {
		p.Data = s.addData(ctx, sess, f, nil, apiProblems(cloud, f.Name, err))
		s.render(w, "add.html", statusOf(err), p)
		return
	}
	http.Redirect(w, r, "/clusters/"+url.PathEscape(c.Name), http.StatusSeeOther)
}
