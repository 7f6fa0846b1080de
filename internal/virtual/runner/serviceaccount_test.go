package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// With sync.toHost.serviceAccounts on, a virtual ServiceAccount reaches
// the host with its annotations (a workload-identity role, say), its image
// pull secret renamed and synced, token automount off, and a pod of that
// account runs on the host as the account's host copy.
func TestServiceAccountSync(t *testing.T) {
	ns := env.NewNamespace(t)
	on := config.Default()
	on.Sync.ToHost.ServiceAccounts.Enabled = true
	withConfig(t, on)
	const role = "arn:aws:iam::123456789012:role/builder"
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}})
	create(t, env.VirtualClient, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: ns,
		Annotations: map[string]string{"eks.amazonaws.com/role-arn": role}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}})
	sa := hostObject(t, &corev1.ServiceAccount{}, "builder", ns)
	if sa.Annotations["eks.amazonaws.com/role-arn"] != role || len(sa.ImagePullSecrets) != 1 || sa.ImagePullSecrets[0].Name != env.HostKey("regcred", ns).Name ||
		sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("host ServiceAccount: annotations %v, pull secrets %v, automount %v", sa.Annotations, sa.ImagePullSecrets, sa.AutomountServiceAccountToken)
	}
	hostObject(t, &corev1.Secret{}, "regcred", ns)

	create(t, env.VirtualClient, pod("build-0", ns, func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }))
	testenv.Eventually(t, wait, func() error {
		var hp corev1.Pod
		if err := env.HostClient.Get(ctx, env.HostKey("build-0", ns), &hp); err != nil {
			return err
		}
		if hp.Spec.ServiceAccountName != env.HostKey("builder", ns).Name {
			return fmt.Errorf("host pod runs as %q", hp.Spec.ServiceAccountName)
		}
		return nil
	})
}

// controlPlane.advanced.workloadServiceAccount: the syncer makes the host
// ServiceAccount of the name given, with its labels, annotations (and
// globalMetadata's) and both lists of image pull secrets, and the host
// pods run as it.
func TestWorkloadServiceAccount(t *testing.T) {
	ns := env.NewNamespace(t)
	cfg := config.Default()
	adv := &cfg.ControlPlane.Advanced
	adv.WorkloadServiceAccount.Name = "team-workloads"
	adv.WorkloadServiceAccount.Labels = map[string]string{"team": "a"}
	adv.WorkloadServiceAccount.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "workload-registry"}}
	adv.ServiceAccount.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "shared-registry"}}
	adv.GlobalMetadata.Annotations = map[string]string{"example.com/owner": "ops"}
	withConfig(t, cfg)
	var sa corev1.ServiceAccount
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: "team-workloads"}, &sa); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &sa) })
	if sa.Labels["team"] != "a" || sa.Annotations["example.com/owner"] != "ops" || len(sa.ImagePullSecrets) != 2 ||
		sa.ImagePullSecrets[0].Name != "shared-registry" || sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("host ServiceAccount: labels %v, annotations %v, pull secrets %v, automount %v", sa.Labels, sa.Annotations, sa.ImagePullSecrets, sa.AutomountServiceAccountToken)
	}
	create(t, env.VirtualClient, pod("runs-as", ns, nil))
	testenv.Eventually(t, wait, func() error {
		var hp corev1.Pod
		if err := env.HostClient.Get(ctx, env.HostKey("runs-as", ns), &hp); err != nil {
			return err
		}
		if hp.Spec.ServiceAccountName != "team-workloads" {
			return fmt.Errorf("host pod runs as %q, want team-workloads", hp.Spec.ServiceAccountName)
		}
		return nil
	})
}
