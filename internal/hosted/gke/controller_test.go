package gke

import (
	"errors"
	"net/http"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/api/googleapi"
)

// Busy is read from the statuses, of the cluster or any pool; waiting
// errors are classified by reason, never by message.
func TestBusyAndWaiting(t *testing.T) {
	if busy, why := Busy(&containerpb.Cluster{Status: containerpb.Cluster_RUNNING, NodePools: []*containerpb.NodePool{{Name: "a", Status: containerpb.NodePool_RECONCILING}}}); !busy || why != "pool a is RECONCILING" {
		t.Errorf("Busy = %v %q", busy, why)
	}
	if busy, _ := Busy(&containerpb.Cluster{Status: containerpb.Cluster_RUNNING}); busy {
		t.Error("a RUNNING cluster is busy")
	}
	for _, tt := range []struct {
		name      string
		err       error
		wait, try bool
	}{
		{"busy", &googleapi.Error{Code: 400, Message: "anything", Errors: []googleapi.ErrorItem{{Reason: "failedPrecondition"}}}, true, true},
		{"bad request", &googleapi.Error{Code: 400, Message: "Cluster is running incompatible operation", Errors: []googleapi.ErrorItem{{Reason: "badRequest"}}}, false, false},
		{"stale etag", &googleapi.Error{Code: http.StatusConflict, Errors: []googleapi.ErrorItem{{Reason: "aborted"}}}, true, true},
		{"exists", &googleapi.Error{Code: http.StatusConflict, Errors: []googleapi.ErrorItem{{Reason: "alreadyExists"}}}, false, false},
		{"throttled", &googleapi.Error{Code: http.StatusTooManyRequests}, false, true},
		{"other", errors.New("boom"), false, false},
	} {
		if w, r := waiting(tt.err), Retryable(tt.err); w != tt.wait || r != tt.try {
			t.Errorf("%s: waiting %v retryable %v, want %v %v", tt.name, w, r, tt.wait, tt.try)
		}
	}
}
