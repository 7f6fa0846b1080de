package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
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

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/registered"
)

// What the Add page adds (the form's kind field).
const (
	kindEKS        = "eks"
	kindAKS        = "aks"
	kindGKE        = "gke"
	kindRegistered = "registered"
)

// option is one choice of a select.
type option struct{ Value, Label string }

// addKinds are the Add page's choices, in order.
func addKinds() []option {
	return []option{
		{kindEKS, "Import an Amazon EKS cluster"},
		{kindAKS, "Import an Azure AKS cluster"},
		{kindGKE, "Import a Google GKE cluster"},
		{kindRegistered, "Register any cluster (agent)"},
	}
}

// addForm is what the Add form sends: the inputs of every kind, of which
// kind's are used.
type addForm struct {
	Kind string
	// Name is the Cluster's metadata.name; DisplayName its
	// spec.displayName (the name when empty).
	Name, DisplayName string
	// CloudName is the cluster's name in its cloud: spec.eksConfig.displayName,
	// spec.aksConfig.clusterName, spec.gkeConfig.clusterName.
	CloudName string
	// Region is an EKS cluster's region.
	Region string
	// ResourceGroup is an AKS cluster's resource group.
	ResourceGroup string
	// Location is an AKS cluster's resourceLocation, or a GKE cluster's
	// zone (us-central1-a) or region (us-central1).
	Location string
	// Project is a GKE cluster's projectID.
	Project string
	// Credential is the credential Secret, "namespace:name".
	Credential string
	// Members are a registered cluster's members, one
	// [user:|group:|sa:]NAME=ROLE a line (as `cluster import --member`).
	Members string
}

// formOf reads the Add form of r (unknown kinds are EKS).
func formOf(r *http.Request) addForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := addForm{Kind: v("kind"), Name: v("name"), DisplayName: v("displayName"), CloudName: v("cloudName"), Region: v("region"),
		ResourceGroup: v("resourceGroup"), Location: v("location"), Project: v("project"), Credential: v("credential"), Members: v("members")}
	f.Kind = knownKind(f.Kind)
	return f
}

// knownKind is k when the Add page knows it, else EKS.
func knownKind(k string) string {
	if slices.ContainsFunc(addKinds(), func(o option) bool { return o.Value == k }) {
		return k
	}
	return kindEKS
}

// fieldError is a problem with the form: Input names the input it is
// about ("" for the form as a whole); Message names the Cluster's field.
type fieldError struct{ Input, Message string }

// gkeZone is a GKE zone (a region and a letter), as opposed to a region.
var gkeZone = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+-[a-z]$`)

// buildCluster is the Cluster f asks for: an imported EKS, AKS or GKE
// cluster (imported: true, the credential Secret referenced as
// "namespace:name") or a registered one (registered.Cluster, as `clustersync
// cluster import` makes it). The problems found before asking the API
// server (which checks the schema on the dry run and on create) are
// returned, one per input, each naming the Cluster's field.
func buildCluster(f addForm) (*mgmtv1.Cluster, []fieldError) {
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
	if f.Kind == kindRegistered {
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
	switch f.Kind {
	case kindAKS:
		required("cloudName", "spec.aksConfig.clusterName", f.CloudName)
		required("resourceGroup", "spec.aksConfig.resourceGroup", f.ResourceGroup)
		required("location", "spec.aksConfig.resourceLocation", f.Location)
		credential("spec.aksConfig.azureCredentialSecret")
		c.Spec.AKSConfig = &aksv1.AKSClusterConfigSpec{ClusterName: f.CloudName, ResourceGroup: f.ResourceGroup,
			ResourceLocation: f.Location, AzureCredentialSecret: f.Credential, Imported: true}
	case kindGKE:
		required("project", "spec.gkeConfig.projectID", f.Project)
		required("location", "spec.gkeConfig.zone", f.Location)
		required("cloudName", "spec.gkeConfig.clusterName", f.CloudName)
		credential("spec.gkeConfig.googleCredentialSecret")
		g := &gkev1.GKEClusterConfigSpec{ProjectID: f.Project, ClusterName: f.CloudName, GoogleCredentialSecret: f.Credential, Imported: true}
		if gkeZone.MatchString(f.Location) {
			g.Zone = f.Location
		} else {
			g.Region = f.Location
		}
		c.Spec.GKEConfig = g
	default:
		required("cloudName", "spec.eksConfig.displayName", f.CloudName)
		required("region", "spec.eksConfig.region", f.Region)
		credential("spec.eksConfig.amazonCredentialSecret")
		c.Spec.EKSConfig = &eksv1.EKSClusterConfigSpec{DisplayName: f.CloudName, Region: f.Region,
			AmazonCredentialSecret: f.Credential, Imported: true}
	}
	return c, errs
}

// causeInput is the input of kind's form that field (of an API server's
// Invalid error) comes from; "" when none.
func causeInput(kind, field string) string {
	switch {
	case field == "metadata.name":
		return "name"
	case field == "spec.displayName":
		return "displayName"
	case strings.HasPrefix(field, "spec.members"), strings.HasPrefix(field, "spec.importedConfig.members"):
		return "members"
	}
	byField := map[string]map[string]string{
		kindEKS: {"spec.eksConfig.displayName": "cloudName", "spec.eksConfig.region": "region", "spec.eksConfig.amazonCredentialSecret": "credential"},
		kindAKS: {"spec.aksConfig.clusterName": "cloudName", "spec.aksConfig.resourceGroup": "resourceGroup",
			"spec.aksConfig.resourceLocation": "location", "spec.aksConfig.azureCredentialSecret": "credential"},
		kindGKE: {"spec.gkeConfig.projectID": "project", "spec.gkeConfig.zone": "location", "spec.gkeConfig.region": "location",
			"spec.gkeConfig.clusterName": "cloudName", "spec.gkeConfig.googleCredentialSecret": "credential"},
	}
	return byField[kind][field]
}

// apiProblems are the problems an API error reports: an Invalid error's
// causes, each on its input; a name taken; else the error.
func apiProblems(kind, name string, err error) []fieldError {
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
			out = append(out, fieldError{causeInput(kind, c.Field), msg})
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

// fields are the inputs of f's kind, with f's values and the problems on
// them; creds are the credential Secrets' names (nil with credsErr when
// they may not be listed: the Secret is then typed in).
func fields(f addForm, creds []string, credsErr error, problems []fieldError) []formField {
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
	var out []formField
	switch f.Kind {
	case kindRegistered:
		out = []formField{name, {Name: "members", Label: "Members", Value: f.Members, Type: "textarea", Placeholder: "alice=cluster-owner",
			Hint: "Optional, one a line: [user:|group:|sa:]NAME=ROLE, ROLE cluster-owner, cluster-member or read-only."}}
	case kindAKS:
		ref("azurecredentialConfig-clientId, -clientSecret, -subscriptionId and -tenantId")
		out = []formField{name, display,
			{Name: "cloudName", Label: "AKS cluster name", Value: f.CloudName, Required: true, Hint: "Its name in Azure (spec.aksConfig.clusterName)."},
			{Name: "resourceGroup", Label: "Resource group", Value: f.ResourceGroup, Required: true},
			{Name: "location", Label: "Location", Value: f.Location, Required: true, Placeholder: "eastus"}, cred}
	case kindGKE:
		ref("googlecredentialConfig-authEncodedJson (a service account's JSON key)")
		out = []formField{name, display,
			{Name: "project", Label: "Project ID", Value: f.Project, Required: true},
			{Name: "location", Label: "Location", Value: f.Location, Required: true, Placeholder: "us-central1-a",
				Hint: "A zone (us-central1-a) for a zonal cluster, a region (us-central1) for a regional one."},
			{Name: "cloudName", Label: "GKE cluster name", Value: f.CloudName, Required: true, Hint: "Its name in GKE (spec.gkeConfig.clusterName)."}, cred}
	default:
		ref("amazonec2credentialConfig-accessKey and -secretKey")
		out = []formField{name, display,
			{Name: "cloudName", Label: "EKS cluster name", Value: f.CloudName, Required: true, Hint: "Its name in EKS (spec.eksConfig.displayName)."},
			{Name: "region", Label: "Region", Value: f.Region, Required: true, Placeholder: "us-west-2"}, cred}
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

// texts are the title, introduction and submit label of kind's form.
func texts(kind string) (title, intro, submit string) {
	const imported = " It is imported (imported: true): clustersync never creates or deletes it in the cloud, and every optional field starts unmanaged (docs/hosted.md)."
	switch kind {
	case kindAKS:
		return "Import an Azure AKS cluster", "Connects an existing AKS cluster." + imported, "Import cluster"
	case kindGKE:
		return "Import a Google GKE cluster", "Connects an existing GKE cluster." + imported, "Import cluster"
	case kindRegistered:
		return "Register any cluster", "Creates a registered cluster (spec.importedConfig), as clustersync cluster import does. " +
			"Its page then shows the command to run against the cluster, once the manager issues its registration token (docs/registered.md).", "Register cluster"
	}
	return "Import an Amazon EKS cluster", "Connects an existing EKS cluster." + imported, "Import cluster"
}

// addData is the Add page's data for f: its inputs with the problems on
// them, and, when c is not nil, c's YAML (and a registered cluster's
// import command).
func (s *Server) addData(ctx context.Context, sess *session, f addForm, c *mgmtv1.Cluster, problems []fieldError) addData {
	creds, credsErr := credentials(ctx, sess)
	d := addData{Kinds: addKinds(), Form: f, CSRF: sess.csrf, Fields: fields(f, creds, credsErr, problems)}
	d.Title, d.Intro, d.Submit = texts(f.Kind)
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

// addPage is the Add page: GET /add?kind=eks|aks|gke|registered.
func (s *Server) addPage(w http.ResponseWriter, r *http.Request, sess *session) {
	f := addForm{Kind: knownKind(r.URL.Query().Get("kind"))}
	s.render(w, "add.html", http.StatusOK, page{Title: "Add a cluster", User: sess.user, CSRF: sess.csrf, Data: s.addData(r.Context(), sess, f, nil, nil)})
}

// preview is the Cluster the form asks for and its problems: the form's
// own, else the API server's answer to a dry-run create with the user's
// token (schema, names taken, RBAC).
func (s *Server) preview(ctx context.Context, sess *session, f addForm) (*mgmtv1.Cluster, []fieldError) {
	c, problems := buildCluster(f)
	if len(problems) == 0 {
		if err := sess.client.Create(ctx, c.DeepCopy(), client.DryRunAll); err != nil {
			problems = apiProblems(f.Kind, f.Name, err)
		}
	}
	return c, problems
}

// addPreview answers htmx's POST /add/preview with the form, the YAML it
// would apply and its problems (status 200 either way, so that htmx swaps
// it in).
func (s *Server) addPreview(w http.ResponseWriter, r *http.Request, sess *session) {
	f := formOf(r)
	c, problems := s.preview(r.Context(), sess, f)
	s.renderFragment(w, "add.html", "addform", http.StatusOK, s.addData(r.Context(), sess, f, c, problems))
}

// addSubmit is POST /add: with action=preview (the form without
// JavaScript) the page with the YAML; else it creates the Cluster with the
// user's client and redirects to its page, or shows the form again with
// the problems (422, or the API error's status).
func (s *Server) addSubmit(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	f := formOf(r)
	p := page{Title: "Add a cluster", User: sess.user, CSRF: sess.csrf}
	if r.PostFormValue("action") == "preview" {
		c, problems := s.preview(ctx, sess, f)
		p.Data = s.addData(ctx, sess, f, c, problems)
		s.render(w, "add.html", http.StatusOK, p)
		return
	}
	c, problems := buildCluster(f)
	if len(problems) > 0 {
		p.Data = s.addData(ctx, sess, f, nil, problems)
		s.render(w, "add.html", http.StatusUnprocessableEntity, p)
		return
	}
	if err := sess.client.Create(ctx, c); err != nil {
		p.Data = s.addData(ctx, sess, f, nil, apiProblems(f.Kind, f.Name, err))
		s.render(w, "add.html", statusOf(err), p)
		return
	}
	http.Redirect(w, r, "/clusters/"+url.PathEscape(c.Name), http.StatusSeeOther)
}
