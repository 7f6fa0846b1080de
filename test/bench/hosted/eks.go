package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// eksFleet is EKS in the benchmark: clusters bench-NNN with node groups a
// and b, reached with the bench's token in place of an IAM token.
type eksFleet struct{ token string }

func benchName(i int) string { return fmt.Sprintf("bench-%03d", i) }

func (*eksFleet) cloud() management.Descriptor { return eks.Cloud() }
func (*eksFleet) refreshOp() string            { return "DescribeCluster" }
func (*eksFleet) pushOp() string               { return "TagResource" }

func (e *eksFleet) start(ctx context.Context, k client.Client, n int, endpoint string, ca []byte, token string) (http.Handler, error) {
	e.token = token
	emu := ekstest.NewUnstarted(ekstest.Options{Region: "us-west-2",
		EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca }})
	for i := range n {
		if err := emu.ImportCluster(ekstest.ClusterSpec{Name: benchName(i), Version: "1.32", EndpointPublicAccess: true,
			Tags:       map[string]string{"team": "bench"},
			Nodegroups: []ekstest.NodegroupSpec{{Name: "a"}, {Name: "b"}}}); err != nil {
			return nil, err
		}
	}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: eksv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "bench", eks.SecretKeyField: "bench"}}); err != nil {
		return nil, err
	}
	return emu.Handler(), nil
}

func (*eksFleet) cluster(i int) *mgmtv1.Cluster {
	pub := true
	return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: benchName(i)}, Spec: mgmtv1.ClusterSpec{DisplayName: benchName(i), EKSConfig: &eksv1.EKSClusterConfigSpec{
		DisplayName: benchName(i), Region: "us-west-2", AmazonCredentialSecret: eksv1.Namespace + ":aws", Imported: true,
		PublicAccess: &pub, Tags: &map[string]string{"team": "bench"},
	}}}
}

func (e *eksFleet) options(o *manager.Options, url string, refresh time.Duration) {
	o.Clouds = map[string]management.CloudOptions{eks.Cloud().Key: {Endpoint: url, Refresh: refresh, Poll: time.Second,
		Credentials: eks.TokenFunc(func(context.Context, string, map[string][]byte, string) (string, error) { return e.token, nil })}}
}

func (*eksFleet) pushTag(c *mgmtv1.Cluster) { (*c.Spec.EKSConfig.Tags)["pushed"] = "1" }

func (*eksFleet) pushed(c *mgmtv1.Cluster) bool {
	if c.Status.EKSStatus == nil {
		return false
	}
	a := c.Status.EKSStatus.AppliedSpec
	return a != nil && a.Tags != nil && (*a.Tags)["pushed"] == "1"
}

// operation names an EKS REST-JSON request by method and path shape; the
// operator's calls carry its application ID in the User-Agent.
func (*eksFleet) operation(r *http.Request) (op, cluster string, operator bool) {
	operator = strings.Contains(r.UserAgent(), "app/"+management.OperatorAppID(eks.Cloud().Key))
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) >= 2 && parts[0] == "clusters" {
		cluster = parts[1]
	}
	switch {
	case len(parts) == 2 && parts[0] == "clusters" && r.Method == http.MethodGet:
		return "DescribeCluster", cluster, operator
	case len(parts) == 3 && parts[2] == "node-groups" && r.Method == http.MethodGet:
		return "ListNodegroups", cluster, operator
	case len(parts) == 4 && parts[2] == "node-groups" && r.Method == http.MethodGet:
		return "DescribeNodegroup", cluster, operator
	case len(parts) == 3 && parts[2] == "updates" && r.Method == http.MethodGet:
		return "ListUpdates", cluster, operator
	case len(parts) == 4 && parts[2] == "updates":
		return "DescribeUpdate", cluster, operator
	case len(parts) == 4 && parts[2] == "addons" && r.Method == http.MethodGet:
		return "DescribeAddon", cluster, operator
	case parts[0] == "tags" && r.Method == http.MethodPost:
		return "TagResource", clusterOfARN(r.URL.EscapedPath()), operator
	}
	return r.Method + " /" + strings.Join(parts[:min(len(parts), 3)], "/"), cluster, operator
}

// clusterOfARN returns the cluster name of the cluster ARN in a
// (path-escaped) /tags/<arn> path: arn:aws:eks:<region>:<account>:cluster/<name>.
func clusterOfARN(escapedPath string) string {
	arn, err := url.PathUnescape(strings.TrimPrefix(escapedPath, "/tags/"))
	if err != nil {
		return ""
	}
	_, name, _ := strings.Cut(arn, ":cluster/")
	return name
}
