package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The node's storage: rancher/local-path-provisioner
// (https://github.com/rancher/local-path-provisioner) runs beside the
// kubelet and makes a hostPath PersistentVolume below the node's volumes
// folder for each claim of StorageClass StorageClassName, the cluster's
// default, once a pod that uses the claim is scheduled.
const (
	// LocalPath is the provisioner's component name.
	LocalPath = "local-path-provisioner"
	// StorageClassName is the default StorageClass it serves.
	StorageClassName = "local-path"
	// LocalPathProvisionerName is its provisioner name (upstream's).
	LocalPathProvisionerName = "rancher.io/local-path"
	// LocalPathNamespace holds its helper pods.
	LocalPathNamespace = "local-path-storage"
	// LocalPathServiceAccount is the helper pods' service account.
	LocalPathServiceAccount = "local-path-provisioner-service-account"
	// localPathHelper is the helper's program in its image
	// (internal/images/localpathhelper).
	localPathHelper = "/local-path-helper"
)

// VolumesDir is the folder below which volumes live (removed with the
// node's state folder).
func (o Options) VolumesDir() string { return o.path("volumes") }

func (o Options) localPathFile(name string) string { return o.path("local-path", name) }

// LocalPathConfig renders the provisioner's config.json: every node's
// volumes in VolumesDir, created and removed by the helper program of
// o.LocalPathHelperImage (its setupCommand and teardownCommand; no shell).
func LocalPathConfig(o Options) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"nodePathMap":       []any{map[string]any{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": []string{o.VolumesDir()}}},
		"setupCommand":      localPathHelper,
		"teardownCommand":   localPathHelper,
		"cmdTimeoutSeconds": 60,
	}, "", "  ")
}

// LocalPathHelperPod renders the template of the provisioner's helper pods:
// one container of o.LocalPathHelperImage (pulled once), on the node's
// network (it needs none), no service-account token.
func LocalPathHelperPod(o Options) ([]byte, error) {
	if o.LocalPathHelperImage == "" {
		return nil, fmt.Errorf("realnode: LocalPathHelperImage is empty")
	}
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "helper-pod"},
		Spec: corev1.PodSpec{
			HostNetwork:                  true,
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "helper-pod", Image: o.LocalPathHelperImage,
				ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	return yaml.Marshal(pod)
}

// ensureStorageObjects creates what the provisioner needs in the cluster,
// unless present: its namespace and helper service account, and the
// default StorageClass (WaitForFirstConsumer: the volume goes where the
// pod is scheduled; Delete: the folder goes with the claim).
func ensureStorageObjects(ctx context.Context, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	create := func(what string, err error) error { return created("storage", what, err) }
	if err := create("namespace "+LocalPathNamespace, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: LocalPathNamespace}}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return err
	}
	if err := create("service account "+LocalPathServiceAccount, func() error {
		_, err := cs.CoreV1().ServiceAccounts(LocalPathNamespace).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: LocalPathServiceAccount}, AutomountServiceAccountToken: ptr.To(false)}, metav1.CreateOptions{})
		return err
	}()); err != nil {
		return err
	}
	return create("storage class "+StorageClassName, func() error {
		_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: StorageClassName, Annotations: map[string]string{
				"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner:       LocalPathProvisionerName,
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
			ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		}, metav1.CreateOptions{})
		return err
	}())
}

// created is the error of creating what for part (storage, metrics) of
// the node: nil when it was created or already existed.
func created(part, what string, err error) error {
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("realnode: %s: create %s: %w", part, what, err)
	}
	return nil
}

// localPathArgs are the provisioner's arguments: out of cluster with its
// kubeconfig, its configuration and helper pod from files.
func localPathArgs(o Options) []string {
	return []string{"start", "--kubeconfig", localPathKubeconfig(o), "--namespace", LocalPathNamespace,
		"--provisioner-name", LocalPathProvisionerName, "--service-account-name", LocalPathServiceAccount,
		"--config", o.localPathFile("config.json"), "--helper-pod-file", o.localPathFile("helperPod.yaml")}
}

func localPathKubeconfig(o Options) string { return o.localPathFile("kubeconfig.yaml") }

// localPathStarted reports whether the provisioner's log says its
// controller runs.
func localPathStarted(o Options) bool {
	data, err := os.ReadFile(LogFile(o.Dir, LocalPath))
	return err == nil && bytes.Contains(data, []byte("Started provisioner controller"))
}
