package runner_test

import (
	"fmt"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/volumesnapshots"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// installSnapshotCRDs creates on the host the snapshot CRDs that ship with
// the external-snapshotter client module, as a host with CSI snapshots has
// them, and waits until they are served.
func installSnapshotCRDs(t *testing.T) {
	t.Helper()
	testenv.InstallCRDs(t, env.Host.Config, wait, testenv.SnapshotCRDs(t)...)
}

// snapshotClient is a client of cfg's API server that knows snapshots.
func snapshotClients(t *testing.T) (host, virtual client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	if err := snapshotv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var err error
	if host, err = client.New(env.Host.Config, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	if virtual, err = client.New(env.Virtual.Config, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
	return host, virtual
}

// sync.toHost.volumeSnapshots on real API servers with the
// external-snapshotter CRDs on the host: the CRDs are copied into the
// virtual cluster; a snapshot of a claim goes to the host naming the
// claim's host copy; when the host's snapshot controller (played by the
// test) binds it to a content it made, the virtual snapshot is ready, names
// that content, and a stand-in content of that name appears bound to it; a
// pre-provisioned content and the snapshot using it go to the host named
// and referring as the host copies; deleting the snapshot removes its host
// copy and the stand-in.
func TestVolumeSnapshots(t *testing.T) {
	installSnapshotCRDs(t)
	ns := env.NewNamespace(t)
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	hostC, virtualC := snapshotClients(t)
	cfg := config.Default()
	cfg.Sync.ToHost.VolumeSnapshots.Enabled = true
	withConfig(t, cfg)

	create(t, env.VirtualClient, claim("data", ns, "standard", ""))
	create(t, virtualC, &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: ns},
		Spec: snapshotv1.VolumeSnapshotSpec{Source: snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To("data")},
			VolumeSnapshotClassName: ptr.To("csi-snap")}})
	var hs snapshotv1.VolumeSnapshot
	testenv.Eventually(t, wait, func() error { return hostC.Get(ctx, env.HostKey("snap", ns), &hs) })
	if got := ptr.Deref(hs.Spec.Source.PersistentVolumeClaimName, ""); got != env.HostKey("data", ns).Name {
		t.Errorf("host snapshot source claim %q, want %q", got, env.HostKey("data", ns).Name)
	}

	// The host's snapshot controller makes a content and binds it.
	content := "snapcontent-" + ns
	hc := &snapshotv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: content},
		Spec: snapshotv1.VolumeSnapshotContentSpec{Driver: "csi.example.com", DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
			VolumeSnapshotClassName: ptr.To("csi-snap"), SourceVolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
			Source:            snapshotv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-1")},
			VolumeSnapshotRef: corev1.ObjectReference{Kind: "VolumeSnapshot", Namespace: hs.Namespace, Name: hs.Name, UID: hs.UID}}}
	create(t, hostC, hc)
	t.Cleanup(func() {
		_ = hostC.Delete(ctx, &snapshotv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: content}})
	})
	hc.Status = &snapshotv1.VolumeSnapshotContentStatus{SnapshotHandle: ptr.To("snap-1"), ReadyToUse: ptr.To(true), RestoreSize: ptr.To(int64(1 << 30))}
	if err := hostC.Status().Update(ctx, hc); err != nil {
		t.Fatal(err)
	}
	hs.Status = &snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To(content), ReadyToUse: ptr.To(true),
		RestoreSize: ptr.To(resource.MustParse("1Gi"))}
	if err := hostC.Status().Update(ctx, &hs); err != nil {
		t.Fatal(err)
	}
	var vs snapshotv1.VolumeSnapshot
	testenv.Eventually(t, wait, func() error {
		if err := virtualC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "snap"}, &vs); err != nil {
			return err
		}
		if vs.Status == nil || !ptr.Deref(vs.Status.ReadyToUse, false) || ptr.Deref(vs.Status.BoundVolumeSnapshotContentName, "") != content {
			return fmt.Errorf("virtual snapshot status %+v", vs.Status)
		}
		return nil
	})
	var standIn snapshotv1.VolumeSnapshotContent
	testenv.Eventually(t, wait, func() error {
		if err := virtualC.Get(ctx, client.ObjectKey{Name: content}, &standIn); err != nil {
			return err
		}
		if standIn.Status == nil || !ptr.Deref(standIn.Status.ReadyToUse, false) {
			return fmt.Errorf("stand-in status %+v", standIn.Status)
		}
		return nil
	})
	if !volumesnapshots.IsStandIn(&standIn) || standIn.Spec.VolumeSnapshotRef.Name != "snap" || standIn.Spec.VolumeSnapshotRef.Namespace != ns ||
		standIn.Spec.VolumeSnapshotRef.UID != vs.UID || ptr.Deref(standIn.Spec.Source.SnapshotHandle, "") != "snap-1" {
		t.Errorf("stand-in content %+v", standIn.Spec)
	}

	// A pre-provisioned content and its snapshot.
	create(t, virtualC, &snapshotv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "pre-" + ns},
		Spec: snapshotv1.VolumeSnapshotContentSpec{Driver: "csi.example.com", DeletionPolicy: snapshotv1.VolumeSnapshotContentRetain,
			Source:            snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: ptr.To("handle-2")},
			VolumeSnapshotRef: corev1.ObjectReference{Namespace: ns, Name: "restored"}}})
	create(t, virtualC, &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: ns},
		Spec: snapshotv1.VolumeSnapshotSpec{Source: snapshotv1.VolumeSnapshotSource{VolumeSnapshotContentName: ptr.To("pre-" + ns)}}})
	var hpre snapshotv1.VolumeSnapshotContent
	testenv.Eventually(t, wait, func() error {
		return hostC.Get(ctx, client.ObjectKey{Name: tr.HostClusterScopedName("pre-" + ns)}, &hpre)
	})
	if r := hpre.Spec.VolumeSnapshotRef; r.Namespace != env.HostNamespace || r.Name != env.HostKey("restored", ns).Name {
		t.Errorf("host pre-provisioned content ref %+v", r)
	}
	var hr snapshotv1.VolumeSnapshot
	testenv.Eventually(t, wait, func() error { return hostC.Get(ctx, env.HostKey("restored", ns), &hr) })
	if got := ptr.Deref(hr.Spec.Source.VolumeSnapshotContentName, ""); got != tr.HostClusterScopedName("pre-"+ns) {
		t.Errorf("host snapshot content source %q", got)
	}

	// Deleted: the host copy and the stand-in go.
	if err := virtualC.Delete(ctx, &vs); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err1 := hostC.Get(ctx, env.HostKey("snap", ns), &snapshotv1.VolumeSnapshot{})
		err2 := virtualC.Get(ctx, client.ObjectKey{Name: content}, &snapshotv1.VolumeSnapshotContent{})
		if apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2) {
			return nil
		}
		return fmt.Errorf("host snapshot (err %v) or stand-in (err %v) still there", err1, err2)
	})
}
