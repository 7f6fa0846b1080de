package syncer

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Context is what every resource syncer works with. It is built once by the
// syncer and shared by all controllers; its fields are not changed after
// the controllers start.
type Context struct {
	Translator translate.Translator
	Config     *config.Config
	// Virtual and Host read from the informer caches and write to the API servers.
	Virtual, Host client.Client
	// VirtualReader and HostReader read from the API servers, bypassing the caches.
	VirtualReader, HostReader client.Reader
	// Events records events on virtual objects.
	Events events.EventRecorder
	// Mappings is the name mapping and reference store.
	Mappings *mapping.Store
	Log      logr.Logger
	// Kubelet is where fake nodes say their kubelet is (the syncer's
	// kubelet proxy); set it before the controllers start. Zero: no kubelet
	// is served, and fake nodes name none.
	Kubelet KubeletEndpoint

	queues map[string]chan event.GenericEvent
	// controllerOf maps a kind ("Secret") to its controller name ("secrets").
	controllerOf map[string]string
	mu           sync.Mutex
	// reported remembers the SyncError event last recorded on each object,
	// so a collision is reported once rather than at every retry.
	reported map[types.UID]report
	// policyReported remembers the last ReportWarning event recorded (reason
	// and message), per object, so each is recorded once; it is emptied when it reaches
	// maxPolicyReported objects (an event then repeats once).
	policyReported map[types.UID]string
	// echoes are the object versions this syncer wrote.
	echoes echoes
	// patches are the compiled patches of each kind (SetPatches).
	patches map[schema.GroupVersionKind]*patches.Set
}

// KubeletEndpoint is the address of the kubelet API the virtual API server
// reaches for the fake nodes' pods (internal/virtual/kubeletproxy).
type KubeletEndpoint struct {
	// IP is the node's InternalIP, e.g. 127.0.0.1 when the virtual API
	// server runs beside the syncer.
	IP string
	// Port is the node's kubelet port (status.daemonEndpoints).
	Port int32
}

// NewContext returns a Context; call Register for each resource afterwards.
func NewContext(t translate.Translator, cfg *config.Config, virtual, host client.Client, virtualReader, hostReader client.Reader,
	ev events.EventRecorder, store *mapping.Store, log logr.Logger) *Context {
	return &Context{
		Translator: t, Config: cfg, Virtual: virtual, Host: host, VirtualReader: virtualReader, HostReader: hostReader,
		Events: ev, Mappings: store, Log: log,
		queues: map[string]chan event.GenericEvent{}, controllerOf: map[string]string{}, reported: map[types.UID]report{},
		policyReported: map[types.UID]string{},
		patches:        map[schema.GroupVersionKind]*patches.Set{},
	}
}

// queue returns (creating before start) the wake-up channel of controller name.
func (s *Context) queue(name string) chan event.GenericEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[name]
	if !ok {
		q = make(chan event.GenericEvent, 1024)
		s.queues[name] = q
	}
	return q
}

// Enqueue asks controller name (e.g. "secrets") to reconcile the virtual
// object key. It does not block the caller for long: the channel is
// buffered, and a full buffer is drained by the controller.
func (s *Context) Enqueue(ctx context.Context, name string, key types.NamespacedName) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case s.queue(name) <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}

// EnqueueRefs wakes the controllers of the referenced objects refs (a
// Secret a pod started or stopped using); kinds without a controller are
// skipped.
func (s *Context) EnqueueRefs(ctx context.Context, refs []mapping.Ref) {
	for _, r := range refs {
		s.mu.Lock()
		name, ok := s.controllerOf[r.Kind]
		s.mu.Unlock()
		if ok {
			s.Enqueue(ctx, name, types.NamespacedName{Namespace: r.Namespace, Name: r.Name})
		}
	}
}

// SetReferences records that virtual object from uses the objects to
// (its Secrets, ConfigMaps, claims), and wakes the controllers of those it
// started or stopped using, so selective sync follows.
func (s *Context) SetReferences(ctx context.Context, from mapping.Ref, to []mapping.Ref) {
	added, dropped := s.Mappings.SetReferences(from, to)
	s.EnqueueRefs(ctx, added)
	s.EnqueueRefs(ctx, dropped)
}

// ReportSyncError records a Warning event SyncError on the virtual object,
// once per distinct message.
func (s *Context) ReportSyncError(virtual client.Object, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := virtual.GetUID()
	s.mu.Lock()
	same := s.reported[key].msg == msg
	s.reported[key] = report{msg: msg, sinceSettled: true}
	s.mu.Unlock()
	if !same {
		s.Events.Eventf(virtual, nil, "Warning", ReasonSyncError, "Sync", "%s", msg)
	}
	s.Log.Info("sync error", "object", client.ObjectKeyFromObject(virtual), "message", msg)
}

// ReasonSyncError is the reason of the Warning events ReportSyncError
// records.
const ReasonSyncError = "SyncError"

// maxPolicyReported bounds Context.policyReported, in objects.
const maxPolicyReported = 4096

// ReasonPolicyEnforced is the reason of the Warning events ReportPolicy
// records.
const ReasonPolicyEnforced = "PolicyEnforced"

// ReportPolicy records a Warning PolicyEnforced event on a virtual object
// whose host copy an isolation rule changed (docs/security.md): what was
// left out and which `policies:` key did it. The same message is recorded
// once per object. The message must name no host object.
func (s *Context) ReportPolicy(virtual client.Object, format string, args ...any) {
	s.ReportWarning(virtual, ReasonPolicyEnforced, format, args...)
}

// ReportWarning records a Warning event of reason on a virtual object, once
// per object and message (a message that changes is recorded again): what
// the syncer left out or refused, and why. The message must name no host
// object.
func (s *Context) ReportWarning(virtual client.Object, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	key := reason + "\x00" + msg
	s.mu.Lock()
	same := s.policyReported[virtual.GetUID()] == key
	if !same {
		if len(s.policyReported) >= maxPolicyReported {
			clear(s.policyReported)
		}
		s.policyReported[virtual.GetUID()] = key
	}
	s.mu.Unlock()
	if !same {
		s.Events.Eventf(virtual, nil, "Warning", reason, "Sync", "%s", msg)
	}
}

// report is the SyncError last recorded on an object.
type report struct {
	msg string
	// sinceSettled is set when it was recorded after the object's last
	// settleReported: a Sync that succeeds but reports (a pod kept as it
	// is on the host) keeps its report.
	sinceSettled bool
}

// settleReported ends a Sync of a virtual object that succeeded: its
// reported error is forgotten (so that it is reported again should it come
// back), unless the Sync reported it itself.
func (s *Context) settleReported(uid types.UID) {
	s.mu.Lock()
	if r, ok := s.reported[uid]; ok && r.sinceSettled {
		s.reported[uid] = report{msg: r.msg}
	} else {
		delete(s.reported, uid)
	}
	s.mu.Unlock()
}
