package syncer

import (
	"errors"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// authzDenial matches the API server's message for a request its
// authorizer denies (`User "…" cannot create resource "services" …`),
// which is about the syncer's permissions, not the object.
var authzDenial = regexp.MustCompile(`cannot [a-z]+ resource "`)

// hostRefused marks a 403 Forbidden of a write to the host (Context.CreateHost,
// PatchHost, PatchHostStatus), so HostRefusal tells it from a refusal by
// the virtual API server (a tenant's admission webhook refusing the
// syncer's status write is not the host's doing).
type hostRefused struct{ err error }

func (h *hostRefused) Error() string { return h.err.Error() }
func (h *hostRefused) Unwrap() error { return h.err }

// refusedByHost marks err as the host's refusal when it is a Forbidden.
func refusedByHost(err error) error {
	if apierrors.IsForbidden(err) {
		return &hostRefused{err: err}
	}
	return err
}

// HostRefusal turns a host API server's refusal of a write made through
// Context.CreateHost, PatchHost or PatchHostStatus (403 Forbidden: a
// ResourceQuota of the host namespace, an admission webhook or policy) into what the tenant is told in a SyncError event, and
// reports whether err is one. The host's message names host objects (the
// copy's host name, the quota's name), which the tenant does not see
// (docs/security.md): a quota refusal keeps only what was requested,
// used and limited, e.g. "the host namespace's quota does not allow it
// (requested: services.nodeports=1, used: services.nodeports=0, limited:
// services.nodeports=0)"; any other refusal is "the host refused it". A
// Forbidden that the syncer's own permissions cause (RBAC: "cannot create
// resource") is not a refusal of the object and reports false.
func HostRefusal(err error) (string, bool) {
	var status apierrors.APIStatus
	var host *hostRefused
	if !errors.As(err, &host) || !errors.As(err, &status) {
		return "", false
	}
	msg := status.Status().Message
	if authzDenial.MatchString(msg) {
		return "", false
	}
	if _, rest, ok := strings.Cut(msg, "exceeded quota: "); ok {
		if i := strings.Index(rest, "requested: "); i >= 0 {
			return "the host namespace's quota does not allow it (" + rest[i:] + ")", true
		}
		return "the host namespace's quota does not allow it", true
	}
	return "the host refused it", true
}
