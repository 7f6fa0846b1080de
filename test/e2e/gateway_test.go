package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/resources/gatewayapi"
)

// gatewayFile is the vcluster.yaml of the Gateway API test: tenant
// Gateways and HTTPRoutes to the host, host Gateway EDGE_NS/public shown
// as shared/edge, for routes of any virtual namespace claiming names
// under example.com.
const gatewayFile = `sync:
  toHost:
    gatewayApi:
      enabled: true
  fromHost:
    gateways:
      enabled: true
      mappings:
        byName:
          "EDGE_NS/public": "shared/edge"
      allowedRoutes:
        overrides:
        - hostNamespace: EDGE_NS
          name: public
          virtualNamespacePolicy: {from: All}
          allowedHostnames: ["*.example.com"]
`

// gatewayTenant is what the tenant applies with kubectl: a Service, a
// Gateway of its own on the host's class, a route on it and on the shared
// host Gateway, a route the shared Gateway refuses (a hostname outside
// example.com), and a route to a Service of another namespace that only a
// ReferenceGrant (applied later) allows.
const gatewayTenant = `apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: Namespace
metadata: {name: db}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {ports: [{port: 80}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: pg, namespace: db}
spec: {ports: [{port: 5432}], selector: {app: pg}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: own, namespace: app}
spec:
  gatewayClassName: shared
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: app}
spec:
  parentRefs: [{name: own}, {name: edge, namespace: shared}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: evil, namespace: app}
spec:
  parentRefs: [{name: edge, namespace: shared}]
  hostnames: [evil.test]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: data, namespace: app}
spec:
  parentRefs: [{name: own}]
  rules: [{backendRefs: [{name: pg, namespace: db, port: 5432}]}]
`

// gatewayAPI creates virtual cluster fh-g with the Gateway API on, as a
// platform team would: first on a host without the CRDs (refused in
// seconds, naming the key and the fix), then with them (but
// ReferenceGrants', which the tenant gets from clustersync), a GatewayClass and
// a shared Gateway on the host. The tenant sees the class and the shared
// Gateway read-only; its Gateway and routes reach the host with their
// references translated; what the host's gateway controller writes (a
// stand-in here: the host admin writes status) comes back with the
// tenant's names; a route the shared Gateway's policy refuses, and a
// cross-namespace backend until a ReferenceGrant allows it, stay in the
// tenant with a Warning event.
func gatewayAPI(t *testing.T, hostKubeconfig string) {
	const name, ns, edgeNS = "fh-g", "fh-g-host", "fh-g-edge"
	host := gatewayClient(t, hostKubeconfig)
	path := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(gatewayFile, "EDGE_NS", edgeNS)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := host.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: edgeNS}}); ignoreExists(err) != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: edgeNS}}) })

	// Without the CRDs on the host: refused before anything is installed.
	if served, _ := kubectlErr(hostKubeconfig, "get", "crd", "gateways.gateway.networking.k8s.io"); !strings.Contains(served, "NotFound") {
		t.Logf("the host serves the Gateway API already: the missing-CRD check is skipped (%s)", strings.TrimSpace(served))
	} else {
		start := time.Now()
		out, err := cliErr("virtual", "create", name, "-n", ns, "-f", path, "--kubeconfig-out", filepath.Join(t.TempDir(), "kubeconfig"))
		if err == nil || !strings.Contains(out, "sync.toHost.gatewayApi.gateways.enabled or sync.toHost.gatewayApi.enabled") || !strings.Contains(out, "kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api") {
			t.Fatalf("virtual create on a host without the Gateway API's CRDs (%v) does not name the key and the fix:\n%s", err, out)
		}
		t.Logf("without the CRDs, refused in %s:\n%s", time.Since(start).Round(time.Millisecond), lastLine(out))
	}

	// Not ReferenceGrants: they stay in the tenant, which gets clustersync's
	// bundled CRD.
	testenv.InstallCRDs(t, restConfig(t, hostKubeconfig), time.Minute, testenv.GatewayCRDs(t,
		"gatewayclasses.gateway.networking.k8s.io", "gateways.gateway.networking.k8s.io",
		"httproutes.gateway.networking.k8s.io")...)
	// The host's class and shared Gateway; nothing implements them here,
	// so the test writes what their controller would (status).
	kubectlApply(t, hostKubeconfig, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shared}
spec: {controllerName: example.com/stand-in}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public, namespace: %s, labels: {tier: edge}}
spec:
  gatewayClassName: shared
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
`, edgeNS))
	t.Cleanup(func() { _, _ = kubectlErr(hostKubeconfig, "delete", "gatewayclass", "shared", "--ignore-not-found") })

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	out := cli(t, "virtual", "create", name, "-n", ns, "-f", path, "--kubeconfig-out", kubeconfig)
	t.Cleanup(func() {
		if out, err := cliErr("virtual", "delete", name, "-n", ns, "--delete-namespace"); err != nil {
			t.Errorf("virtual delete %s: %v\n%s", name, err, out)
		}
	})
	t.Logf("virtual create (gateway API):\n%s", lastLine(out))
	virtual := gatewayClient(t, kubeconfig)

	// The host's class and shared Gateway, read-only in the tenant.
	testenv.Eventually(t, time.Minute, func() error {
		var c gatewayv1.GatewayClass
		if err := virtual.Get(ctx, client.ObjectKey{Name: "shared"}, &c); err != nil {
			return err
		}
		var g gatewayv1.Gateway
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "shared", Name: "edge"}, &g); err != nil {
			return err
		}
		if g.Labels[gatewayapi.LabelImportedGateway] != "true" || g.Labels["tier"] != "edge" || g.Labels[fromhost.Label] != "true" {
			return fmt.Errorf("labels of the copy of the shared Gateway: %v", g.Labels)
		}
		return nil
	})

	kubectlApply(t, kubeconfig, gatewayTenant)
	hostRoute := func(vname string) (*gatewayv1.HTTPRoute, error) {
		var r gatewayv1.HTTPRoute
		return &r, host.Get(ctx, client.ObjectKey{Namespace: ns, Name: vname + "-x-app-x-" + name}, &r)
	}
	testenv.Eventually(t, time.Minute, func() error {
		var g gatewayv1.Gateway
		if err := host.Get(ctx, client.ObjectKey{Namespace: ns, Name: "own-x-app-x-" + name}, &g); err != nil {
			return err
		}
		if from := *g.Spec.Listeners[0].AllowedRoutes.Namespaces.From; from != gatewayv1.NamespacesFromSame {
			return fmt.Errorf("host Gateway's listener admits routes from %s, want Same", from)
		}
		r, err := hostRoute("shop")
		if err != nil {
			return err
		}
		want := []string{"/own-x-app-x-" + name, edgeNS + "/public"}
		var got []string
		for _, p := range r.Spec.ParentRefs {
			ns := ""
			if p.Namespace != nil {
				ns = string(*p.Namespace)
			}
			got = append(got, ns+"/"+string(p.Name))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("host route's parents %v, want %v", got, want)
		}
		if b := r.Spec.Rules[0].BackendRefs[0].Name; b != gatewayv1.ObjectName("web-x-app-x-"+name) {
			return fmt.Errorf("host route's backend %s", b)
		}
		return nil
	})

	// The host's controller (the host admin here) accepts the route on both
	// parents: the tenant sees it under its own names.
	kubectl(t, hostKubeconfig, "patch", "httproute", "-n", ns, "shop-x-app-x-"+name, "--subresource=status", "--type=merge", "-p",
		fmt.Sprintf(`{"status":{"parents":[
{"parentRef":{"name":"own-x-app-x-%[1]s"},"controllerName":"example.com/stand-in","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]},
{"parentRef":{"name":"public","namespace":"%[2]s"},"controllerName":"example.com/stand-in","conditions":[{"type":"Accepted","status":"True","reason":"Accepted","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}]}}`, name, edgeNS))
	kubectl(t, hostKubeconfig, "patch", "gateway", "-n", edgeNS, "public", "--subresource=status", "--type=merge", "-p",
		`{"status":{"addresses":[{"type":"IPAddress","value":"10.0.0.9"}],"conditions":[{"type":"Programmed","status":"True","reason":"Programmed","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	testenv.Eventually(t, time.Minute, func() error {
		out, err := kubectlErr(kubeconfig, "get", "httproute", "-n", "app", "shop", "-o", `jsonpath={range .status.parents[*]}{.parentRef.namespace}/{.parentRef.name}={.conditions[0].status};{end}`)
		if err != nil || out != "/own=True;shared/edge=True;" {
			return fmt.Errorf("tenant's route status parents %q (%v), want /own=True;shared/edge=True;", out, err)
		}
		var g gatewayv1.Gateway
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "shared", Name: "edge"}, &g); err != nil {
			return err
		}
		if len(g.Status.Conditions) != 1 || len(g.Status.Addresses) != 0 {
			return fmt.Errorf("shared Gateway's status in the tenant: %+v (want the host's condition, no addresses)", g.Status)
		}
		return nil
	})

	// Refused: a hostname the shared Gateway does not take, and a Service of
	// another namespace without a ReferenceGrant.
	for route, want := range map[string]string{
		"evil": "Gateway shared/edge takes routes for *.example.com only, not evil.test",
		"data": "Service db/pg is in another namespace, and no ReferenceGrant there allows HTTPRoutes of namespace app to use it",
	} {
		testenv.Eventually(t, time.Minute, func() error {
			out, err := kubectlErr(kubeconfig, "get", "events", "-n", "app", "--field-selector", "involvedObject.name="+route+",reason="+gatewayapi.ReasonNotPermitted, "-o", "jsonpath={.items[*].message}")
			if err != nil || !strings.Contains(out, want) {
				return fmt.Errorf("events of route %s: %q (%v), want %q", route, out, err, want)
			}
			return nil
		})
		if _, err := hostRoute(route); err == nil {
			t.Errorf("route %s, refused, has a host copy", route)
		}
	}
	kubectlApply(t, kubeconfig, `apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: app-routes, namespace: db}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}]
  to: [{group: "", kind: Service}]
`)
	start := time.Now()
	testenv.Eventually(t, time.Minute, func() error {
		r, err := hostRoute("data")
		if err != nil {
			return err
		}
		if b := r.Spec.Rules[0].BackendRefs[0]; b.Name != gatewayv1.ObjectName("pg-x-db-x-"+name) || b.Namespace != nil {
			return fmt.Errorf("host route's backend %+v", b)
		}
		return nil
	})
	t.Logf("ReferenceGrant applied → route on the host in %s", time.Since(start).Round(time.Millisecond))

	// The copy of the shared Gateway is read-only: a tenant's edit is put back.
	kubectl(t, kubeconfig, "label", "gateway", "-n", "shared", "edge", "tier=mine", "--overwrite")
	testenv.Eventually(t, time.Minute, func() error {
		var g gatewayv1.Gateway
		if err := virtual.Get(ctx, client.ObjectKey{Namespace: "shared", Name: "edge"}, &g); err != nil {
			return err
		}
		if g.Labels["tier"] != "edge" {
			return fmt.Errorf("tier label %q, want edge put back", g.Labels["tier"])
		}
		return nil
	})
}

// kubectlApply applies manifests with kubectl (server-side) and kubeconfig.
func kubectlApply(t *testing.T, kubeconfig, manifests string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, []byte(manifests), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl(t, kubeconfig, "apply", "--server-side", "-f", f)
}

// gatewayClient is a client of kubeconfig's cluster that knows the
// Gateway API's types besides Kubernetes' own.
func gatewayClient(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := gatewayv1.Install(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(restConfig(t, kubeconfig), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
