package pvcs

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Names resolves the host names of what a claim names.
type Names struct {
	Translator translate.Translator
	// StorageClass maps a virtual class name to the host class
	// (storageclasses.HostClassOf); nil keeps names as written.
	StorageClass func(name string) string
	// Volume maps the name of a virtual volume to its host copy's, or ""
	// when it has none; nil: "" (the host's binder picks a volume).
	Volume func(name string) string
}

// HostSpec is the host spec of virtual claim v: data sources that name
// other claims or snapshots in the virtual namespace are renamed; a
// storage class named is the host's (n.StorageClass); the volume name is
// the host copy of the tenant's volume, or left to the host's binder.
func HostSpec(v *corev1.PersistentVolumeClaim, n Names) corev1.PersistentVolumeClaimSpec {
	tr := n.Translator
	spec := *v.Spec.DeepCopy()
	spec.VolumeName = ""
	if n.Volume != nil && v.Spec.VolumeName != "" {
		spec.VolumeName = n.Volume(v.Spec.VolumeName)
	}
	if c := spec.StorageClassName; c != nil && *c != "" && n.StorageClass != nil {
		host := n.StorageClass(*c)
		spec.StorageClassName = &host
	}
	if ds := spec.DataSource; ds != nil && (ds.Kind == "PersistentVolumeClaim" || ds.Kind == "VolumeSnapshot") {
		ds.Name = tr.HostName(ds.Name, v.Namespace)
	}
	if ds := spec.DataSourceRef; ds != nil && (ds.Kind == "PersistentVolumeClaim" || ds.Kind == "VolumeSnapshot") && ds.Namespace == nil {
		ds.Name = tr.HostName(ds.Name, v.Namespace)
	}
	return spec
}
