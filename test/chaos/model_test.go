package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
)

// kind is one of the four kinds the churn writes.
type kind int

const (
	podKind kind = iota
	serviceKind
	secretKind
	configMapKind
	numKinds
)

func (k kind) String() string {
	return [...]string{"Pod", "Service", "Secret", "ConfigMap"}[k]
}

// prefix starts the names of the churn's objects of kind k.
func (k kind) prefix() string { return [...]string{"pod", "svc", "sec", "cm"}[k] }

// newObject is an empty object of kind k.
func (k kind) newObject() client.Object {
	return [...]func() client.Object{
		func() client.Object { return &corev1.Pod{} }, func() client.Object { return &corev1.Service{} },
		func() client.Object { return &corev1.Secret{} }, func() client.Object { return &corev1.ConfigMap{} },
	}[k]()
}

// key names one virtual object.
type key struct {
	kind     kind
	ns, name string
}

func (k key) String() string { return k.kind.String() + " " + k.ns + "/" + k.name }

// The churn's label and annotation keys. gen and note change with every
// update and are the keys the host-side edits contest; opt keys come and
// go (removals must reach the host); release is a reserved key the host
// stores under a hashed key; incarnation tells one create of a name from
// another.
const (
	labelGen          = "chaos.clustersync.io/gen"
	labelOpt          = "chaos.clustersync.io/opt"
	labelRelease      = "release"
	annNote           = "chaos.clustersync.io/note"
	annOpt            = "chaos.clustersync.io/opt"
	annIncarnation    = "chaos.clustersync.io/incarnation"
	hostKeyPrefix     = "host.chaos.clustersync.io/"
	hostValuePrefix   = "host-"
	schedulingGate    = "chaos.clustersync.io/never"
	namespaceLabelKey = "chaos.clustersync.io/namespace"
)

// pauseImage is what runnable pods run: the real node's sandbox image,
// which it always has.
var pauseImage = images.Reference(images.DefaultRegistry, images.PauseRepository, hostcluster.RealNodePauseTag)

// content is what the churn writes to an object at generation gen (the
// number of writes to it so far) of incarnation inc (the sequence number
// of the op that created it). A nil value is a key the object must not
// have at that generation (null in a merge patch).
type content struct {
	labels, annotations, data map[string]*string
	ports                     []corev1.ServicePort
	selector                  map[string]string
	image                     string
}

func when(cond bool, v string) *string {
	if cond {
		return &v
	}
	return nil
}

// desired is the content of k at generation gen, incarnation inc; runnable
// pods run on the real node (their image never changes), the others carry
// a scheduling gate and stay Pending.
func desired(k key, gen, inc int, runnable bool) content {
	c := content{
		labels: map[string]*string{
			labelGen:     ptr.To(strconv.Itoa(gen)),
			labelOpt:     when(gen%3 == 0, "o"+strconv.Itoa(gen)),
			labelRelease: ptr.To("r" + strconv.Itoa(gen%2)),
		},
		annotations: map[string]*string{
			annNote:        ptr.To("n" + strconv.Itoa(gen)),
			annOpt:         when(gen%2 == 0, "o"+strconv.Itoa(gen)),
			annIncarnation: ptr.To(strconv.Itoa(inc)),
		},
	}
	switch k.kind {
	case secretKind, configMapKind:
		c.data = map[string]*string{
			"v":   ptr.To(fmt.Sprintf("%s/%s gen %d", k.ns, k.name, gen)),
			"opt": when(gen%4 == 0, "o"+strconv.Itoa(gen)),
		}
	case serviceKind:
		c.ports = []corev1.ServicePort{{Name: "web", Protocol: corev1.ProtocolTCP, Port: int32(1000 + gen%97), TargetPort: intstr.FromInt32(8080)}}
		if gen%3 == 0 {
			c.ports = append(c.ports, corev1.ServicePort{Name: "extra", Protocol: corev1.ProtocolTCP, Port: int32(2000 + gen%89), TargetPort: intstr.FromInt32(9090)})
		}
		c.selector = map[string]string{"app": "chaos", "sel": "s" + strconv.Itoa(gen%5)}
	case podKind:
		c.image = pauseImage
		if !runnable {
			c.image = "registry.invalid/chaos/app:v" + strconv.Itoa(gen%7)
		}
	}
	return c
}

// present is the keys of m with a value.
func present(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// object is the virtual object k with content c, to create.
func (c content) object(k key, runnable bool) client.Object {
	meta := metav1.ObjectMeta{Name: k.name, Namespace: k.ns, Labels: present(c.labels), Annotations: present(c.annotations)}
	switch k.kind {
	case secretKind:
		data := map[string][]byte{}
		for k, v := range present(c.data) {
			data[k] = []byte(v)
		}
		return &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: data}
	case configMapKind:
		return &corev1.ConfigMap{ObjectMeta: meta, Data: present(c.data)}
	case serviceKind:
		return &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: c.ports, Selector: c.selector}}
	}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers:                    []corev1.Container{{Name: "c", Image: c.image, ImagePullPolicy: corev1.PullIfNotPresent}},
	}}
	if !runnable {
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingGate}}
	}
	return pod
}

// patch is the JSON merge patch (strategic for pods, whose container list
// is merged by name) that turns an object of k's earlier content into c:
// the churn's own keys only, so keys others added (the host's, copied
// back by the syncer) are left alone.
func (c content) patch(k key) (client.Patch, error) {
	meta := map[string]any{"labels": c.labels, "annotations": c.annotations}
	body := map[string]any{"metadata": meta}
	switch k.kind {
	case secretKind:
		data := map[string]any{}
		for k, v := range c.data {
			if v == nil {
				data[k] = nil
			} else {
				data[k] = []byte(*v) // base64 in JSON
			}
		}
		body["data"] = data
	case configMapKind:
		body["data"] = c.data
	case serviceKind:
		body["spec"] = map[string]any{"ports": c.ports, "selector": c.selector}
	case podKind:
		body["spec"] = map[string]any{"containers": []map[string]any{{"name": "c", "image": c.image}}}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	if k.kind == podKind {
		return client.RawPatch("application/strategic-merge-patch+json", raw), nil
	}
	return client.RawPatch("application/merge-patch+json", raw), nil
}

// verify compares virtual object obj with c and returns what differs.
// hostValues are the values host-side edits wrote to the contested keys
// (labelGen, annNote) of obj's host copy: the syncer may carry those into
// the virtual object, as it merges labels and annotations both ways.
// Other keys obj may have beyond c's are the host edits' own
// (hostKeyPrefix), copied back the same way.
func (c content) verify(obj client.Object, hostValues map[string]bool) []string {
	var bad []string
	meta := func(what string, want map[string]*string, got map[string]string, contested string) {
		for k, v := range want {
			g, ok := got[k]
			switch {
			case v == nil && ok:
				bad = append(bad, fmt.Sprintf("%s %s=%q, want none", what, k, g))
			case v != nil && (!ok || g != *v) && !(k == contested && hostValues[g]):
				bad = append(bad, fmt.Sprintf("%s %s=%q, want %q", what, k, g, *v))
			}
		}
		for k, g := range got {
			if _, ours := want[k]; !ours && !hasPrefix(k, hostKeyPrefix) {
				bad = append(bad, fmt.Sprintf("unexpected %s %s=%q", what, k, g))
			}
		}
	}
	meta("label", c.labels, obj.GetLabels(), labelGen)
	meta("annotation", c.annotations, obj.GetAnnotations(), annNote)
	switch o := obj.(type) {
	case *corev1.Secret:
		got := map[string]string{}
		for k, v := range o.Data {
			got[k] = string(v)
		}
		if want := present(c.data); !maps.Equal(got, want) {
			bad = append(bad, fmt.Sprintf("data %v, want %v", got, want))
		}
	case *corev1.ConfigMap:
		if want := present(c.data); !maps.Equal(o.Data, want) {
			bad = append(bad, fmt.Sprintf("data %v, want %v", o.Data, want))
		}
	case *corev1.Service:
		if !samePorts(o.Spec.Ports, c.ports) || !maps.Equal(o.Spec.Selector, c.selector) {
			bad = append(bad, fmt.Sprintf("ports %s selector %v, want %s %v", portsString(o.Spec.Ports), o.Spec.Selector, portsString(c.ports), c.selector))
		}
	case *corev1.Pod:
		if len(o.Spec.Containers) != 1 || o.Spec.Containers[0].Image != c.image {
			bad = append(bad, fmt.Sprintf("containers %v, want image %s", o.Spec.Containers, c.image))
		}
	}
	return bad
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// samePorts compares the fields of ports the churn sets.
func samePorts(got, want []corev1.ServicePort) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Port != w.Port || g.Protocol != w.Protocol || g.TargetPort != w.TargetPort {
			return false
		}
	}
	return true
}

func portsString(ports []corev1.ServicePort) string {
	s := "["
	for i, p := range ports {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s:%d/%s->%s", p.Name, p.Port, p.Protocol, p.TargetPort.String())
	}
	return s + "]"
}
