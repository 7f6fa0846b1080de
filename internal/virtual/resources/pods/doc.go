// Package pods syncs virtual pods to the host and their status back, as
// vCluster does (https://www.mintlify.com/loft-sh/vcluster/syncing/overview and
// https://github.com/loft-sh/vcluster/tree/main/pkg/controllers/resources/pods).
// The host schedules and runs the pod; the syncer plays the kubelet for the virtual cluster: it binds the virtual
// pod to the fake node of the host node the pod runs on, copies status
// host → virtual, copies images, tolerations, activeDeadlineSeconds and
// scheduling gates virtual → host, and finishes deletions on both sides.
//
// translate.go holds the pure part: the host pod spec and annotations.
package pods
