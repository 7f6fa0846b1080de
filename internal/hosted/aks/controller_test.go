package aks

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// Azure's throttling, server errors, 409 (another operation runs), 412
// (changed since read) and broken connections are retried; a refusal
// (400, 403, 404) and anything else is not.
func TestRetryable(t *testing.T) {
	status := func(code int) error { return &azcore.ResponseError{StatusCode: code} }
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"throttled", status(http.StatusTooManyRequests), true},
		{"server error", status(http.StatusServiceUnavailable), true},
		{"operation in progress", status(http.StatusConflict), true},
		{"changed since read", status(http.StatusPreconditionFailed), true},
		{"bad request", status(http.StatusBadRequest), false},
		{"forbidden", status(http.StatusForbidden), false},
		{"not found", status(http.StatusNotFound), false},
		{"connection", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"wrapped", errors.Join(errors.New("put cluster"), status(http.StatusTooManyRequests)), true},
		{"other", context.Canceled, false},
	} {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("%s: Retryable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
