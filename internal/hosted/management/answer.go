package management

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Answer is how the user answers a conflict (Resolve).
type Answer string

const (
	// Keep pushes the user's value over the cloud's: the conflict's config
	// and upstream values are recorded at its path in the Cluster's
	// engine.KeepAnnotation; the config is not changed.
	Keep Answer = "keep"
	// Take takes the cloud's value: the field of the Cluster's config is
	// set to the upstream value the conflict recorded, as an edit with
	// kubectl would; nothing is written to the cloud.
	Take Answer = "take"
)

var (
	// ErrNotHosted is Resolve's error for a Cluster of no cloud.
	ErrNotHosted = errors.New("not a hosted cluster")
	// ErrNoConflict is Resolve's error when no conflict is recorded at
	// the path (any more), or the field was edited since it was.
	ErrNoConflict = errors.New("no conflict")
)

// Resolve answers the conflict recorded at path (the Cluster's
// status.conflicts, the operator's record as the management controller
// copied it) of Cluster name with a, reading and writing with k —
// the user's own identity: the dashboard's session, the CLI's kubeconfig;
// hosted sees a Cluster through its cloud (clouds.Hosted). A user allowed
// to get and patch the Cluster may answer; the operator object is never
// read. The Cluster is
// patched with an optimistic lock, so an answer is never made on a
// Cluster changed since it was read. It returns the conflict answered.
// Errors wrap ErrNotHosted, ErrNoConflict (naming the cluster and path;
// for Keep also when the field was edited since the conflict was
// recorded, which answers it already), the API's (not found, forbidden,
// a conflicting write) and SetConfigValue's.
func Resolve(ctx context.Context, k client.Client, hosted func(*mgmtv1.Cluster) (View, bool), name, path string, a Answer) (hostedv1.FieldConflict, error) {
	if a != Keep && a != Take {
		return hostedv1.FieldConflict{}, fmt.Errorf("answer %q: want %q or %q", a, Keep, Take)
	}
	var c mgmtv1.Cluster
	if err := k.Get(ctx, client.ObjectKey{Name: name}, &c); err != nil {
		return hostedv1.FieldConflict{}, fmt.Errorf("cluster %s: %w", name, err)
	}
	v, ok := hosted(&c)
	if !ok {
		return hostedv1.FieldConflict{}, fmt.Errorf("cluster %s: %w", name, ErrNotHosted)
	}
	var cf *hostedv1.FieldConflict
	for _, c := range v.Conflicts() {
		if c.Path == path {
			cf = &c
		}
	}
	if cf == nil {
		return hostedv1.FieldConflict{}, fmt.Errorf("cluster %s: %w on %q (any more)", name, ErrNoConflict, path)
	}
	orig := c.DeepCopy()
	switch a {
	case Take:
		if err := v.SetConfigValue(path, []byte(cf.Upstream)); err != nil {
			return *cf, err
		}
	case Keep:
		now, err := v.ConfigValue(path)
		if err != nil {
			return *cf, err
		}
		if !managed.SameValue(now, []byte(cf.Config)) {
			return *cf, fmt.Errorf("cluster %s: %w on %q to keep: the field is %s now, not the %s the conflict recorded; that edit is pushed", name, ErrNoConflict, path, now, cf.Config)
		}
		ks, err := engine.KeepsOf(c.Annotations)
		if err != nil {
			ks = nil // the management controller reports and removes it
		}
		if ks == nil {
			ks = engine.Keeps{}
		}
		ks[path] = engine.KeepOf(*cf)
		if c.Annotations, err = ks.SetOn(c.Annotations); err != nil {
			return *cf, err
		}
	}
	if err := k.Patch(ctx, &c, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return *cf, fmt.Errorf("cluster %s: %w", name, err)
	}
	return *cf, nil
}
