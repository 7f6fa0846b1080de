package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestVirtualEvent(t *testing.T) {
	first := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	last := metav1.NewTime(time.Date(2026, 1, 2, 3, 9, 5, 0, time.UTC))
	eventTime := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123000, time.UTC))
	virtualPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "virtual-uid"}}
	hostEvent := func(name, message string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: "vc-host", UID: "event-uid", ResourceVersion: "99",
				Labels: map[string]string{"host": "label"},
			},
			InvolvedObject: corev1.ObjectReference{
				Kind: "Pod", APIVersion: "v1", Name: "web-x-ns-x-vc", Namespace: "vc-host",
				UID: "host-uid", ResourceVersion: "12", FieldPath: "spec.containers{web}",
			},
			Related:             &corev1.ObjectReference{Kind: "Node", Name: "node-1"},
			Reason:              "Pulled",
			Message:             message,
			Source:              corev1.EventSource{Component: "kubelet", Host: "node-1"},
			FirstTimestamp:      first,
			LastTimestamp:       last,
			EventTime:           eventTime,
			Count:               3,
			Type:                corev1.EventTypeNormal,
			Series:              &corev1.EventSeries{Count: 2, LastObservedTime: eventTime},
			Action:              "Pull",
			ReportingController: "kubelet",
			ReportingInstance:   "node-1",
		}
	}
	virtualEvent := func(name, message string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			InvolvedObject: corev1.ObjectReference{
				Kind: "Pod", APIVersion: "v1", Name: "web", Namespace: "ns", UID: "virtual-uid", FieldPath: "spec.containers{web}",
			},
			Reason:              "Pulled",
			Message:             message,
			Source:              corev1.EventSource{Component: "kubelet", Host: "node-1"},
			FirstTimestamp:      first,
			LastTimestamp:       last,
			EventTime:           eventTime,
			Count:               3,
			Type:                corev1.EventTypeNormal,
			Series:              &corev1.EventSeries{Count: 2, LastObservedTime: eventTime},
			Action:              "Pull",
			ReportingController: "kubelet",
			ReportingInstance:   "node-1",
		}
	}
	tests := []struct {
		name string
		host *corev1.Event
		want *corev1.Event
	}{
		{
			name: "name and message translated",
			host: hostEvent("web-x-ns-x-vc.17a2b3c4", "Pulled image for web-x-ns-x-vc"),
			want: virtualEvent("web.17a2b3c4", "Pulled image for web"),
		},
		{
			name: "every occurrence in the message",
			host: hostEvent("web-x-ns-x-vc.17a2b3c4", "web-x-ns-x-vc: restarted web-x-ns-x-vc"),
			want: virtualEvent("web.17a2b3c4", "web: restarted web"),
		},
		{
			name: "the host namespace goes with the name",
			host: hostEvent("web-x-ns-x-vc.17a2b3c4", "Successfully assigned vc-host/web-x-ns-x-vc to node-1"),
			want: virtualEvent("web.17a2b3c4", "Successfully assigned ns/web to node-1"),
		},
		{
			name: "event name without the host name prefix",
			host: hostEvent("custom-event", "Pulled"),
			want: virtualEvent("web.custom-event", "Pulled"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.host.DeepCopy()
			got := VirtualEvent(tt.host, virtualPod, "web-x-ns-x-vc")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("VirtualEvent() = %s\nwant %s", toJSON(got), toJSON(tt.want))
			}
			if !reflect.DeepEqual(tt.host, before) {
				t.Errorf("VirtualEvent modified the host event: %s", toJSON(tt.host))
			}
		})
	}
}
