package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// BenchmarkClustersPage serves the clusters page of 200 Clusters to a
// signed-in user (`make bench`): the server time per page and its weight
// (bytes/page) are the figures.
func BenchmarkClustersPage(b *testing.B) {
	if env == nil {
		b.Skip("no API server (-short)")
	}
	ctx := context.Background()
	w := startB(b)
	for i := range 200 {
		name := fmt.Sprintf("%s-%03d", w.ns, i)
		c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, EKSConfig: &eksv1.EKSClusterConfigSpec{
			DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: hostedv1.Namespace + ":bench", Imported: true}}}
		if err := w.k.Create(ctx, c); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = w.k.Delete(context.Background(), c) })
		c.Status = mgmtv1.ClusterStatus{Driver: mgmtv1.DriverEKS, Phase: mgmtv1.PhaseActive, Version: "1.33",
			Conditions: []metav1.Condition{cond(mgmtv1.ConditionReady, metav1.ConditionTrue, "Ready", "")}}
		if err := w.k.Status().Update(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.PostForm(w.base+"/login", url.Values{"token": {env.AdminToken(b, w.ns)}})
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("sign in: %v %v", err, resp)
	}
	resp.Body.Close()
	var size int
	b.ResetTimer()
	for b.Loop() {
		resp, err := hc.Get(w.base + "/")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /: %s", resp.Status)
		}
		size = len(body)
	}
	b.ReportMetric(float64(size), "bytes/page")
}
