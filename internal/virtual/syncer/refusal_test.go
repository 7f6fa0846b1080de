package syncer

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHostRefusal(t *testing.T) {
	svc := schema.GroupResource{Resource: "services"}
	for _, tc := range []struct {
		name string
		err  error
		want string
		ok   bool
	}{
		{"quota", refusedByHost(apierrors.NewForbidden(svc, "web-x-ns-x-vc", errors.New("exceeded quota: vc-vc, requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0"))),
			"the host namespace's quota does not allow it (requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0)", true},
		{"wrapped quota", fmt.Errorf("create: %w", refusedByHost(apierrors.NewForbidden(svc, "web-x-ns-x-vc", errors.New("exceeded quota: q, requested: count/services=1, used: count/services=20, limited: count/services=20")))),
			"the host namespace's quota does not allow it (requested: count/services=1, used: count/services=20, limited: count/services=20)", true},
		{"webhook", refusedByHost(apierrors.NewForbidden(svc, "web-x-ns-x-vc", errors.New(`admission webhook "policy.example.com" denied the request: no`))),
			"the host refused it", true},
		{"the syncer's own RBAC", refusedByHost(apierrors.NewForbidden(svc, "web-x-ns-x-vc", errors.New(`User "system:serviceaccount:vc:vc" cannot create resource "services" in API group "" in the namespace "vc"`))),
			"", false},
		{"refused by the virtual API server", apierrors.NewForbidden(svc, "web", errors.New(`admission webhook "tenant.example.com" denied the request`)),
			"", false},
		{"not found", apierrors.NewNotFound(svc, "web"), "", false},
		{"nil", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := HostRefusal(tc.err)
			if got != tc.want || ok != tc.ok {
				t.Errorf("HostRefusal = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
