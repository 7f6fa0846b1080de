package controlplane

import (
	"net"
	"testing"

	"github.com/clustersync/clustersync/internal/pki"
)

func TestPodSANs(t *testing.T) {
	s := PodSANs("vc1", "ns1", "10.96.0.20", "10.244.0.5", []string{"vc.example.com", "10.96.0.20", "192.0.2.9", "vc.example.com"})
	wantDNS := []string{"vc1.ns1", "vc1.ns1.svc", "vc1.ns1.svc.cluster.local", "vc.example.com"}
	if len(s.DNSNames) != len(wantDNS) {
		t.Fatalf("DNS names %v, want %v", s.DNSNames, wantDNS)
	}
	for i, d := range wantDNS {
		if s.DNSNames[i] != d {
			t.Errorf("DNS name %d = %s, want %s", i, s.DNSNames[i], d)
		}
	}
	wantIPs := []string{"10.96.0.20", "10.244.0.5", "192.0.2.9"}
	if len(s.IPs) != len(wantIPs) {
		t.Fatalf("IPs %v, want %v", s.IPs, wantIPs)
	}
	for i, ip := range wantIPs {
		if !s.IPs[i].Equal(net.ParseIP(ip)) {
			t.Errorf("IP %d = %s, want %s", i, s.IPs[i], ip)
		}
	}
}

func TestCoversSANs(t *testing.T) {
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	old := PodSANs("vc1", "ns1", "10.96.0.20", "", nil)
	crt, _, err := ca.Issue(apiServerRequest("vc1", old))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want SANs
		ok   bool
	}{
		{"same", old, true},
		{"subset", PodSANs("vc1", "ns1", "", "", nil), true},
		{"new service IP", PodSANs("vc1", "ns1", "10.96.0.30", "", nil), false},
		{"extra SAN", PodSANs("vc1", "ns1", "10.96.0.20", "", []string{"vc.example.com"}), false},
		{"other namespace", PodSANs("vc1", "ns2", "10.96.0.20", "", nil), false},
	}
	for _, tt := range tests {
		if got := coversSANs(crt, "vc1", tt.want); got != tt.ok {
			t.Errorf("%s: coversSANs = %v, want %v", tt.name, got, tt.ok)
		}
	}
	if coversSANs([]byte("not PEM"), "vc1", old) {
		t.Error("garbage covers SANs")
	}
}
