package mapping

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestStoreReferences(t *testing.T) {
	s := NewMemory()
	pod := Ref{Kind: "Pod", Namespace: "ns", Name: "p"}
	sec := Ref{Kind: "Secret", Namespace: "ns", Name: "s"}
	cm := Ref{Kind: "ConfigMap", Namespace: "ns", Name: "c"}
	if a, d := s.SetReferences(pod, []Ref{sec, cm}); d != nil || len(a) != 2 {
		t.Fatalf("first SetReferences added %v, dropped %v", a, d)
	}
	if !s.IsReferenced(sec) || !s.IsReferenced(cm) {
		t.Fatal("references not recorded")
	}
	a, d := s.SetReferences(pod, []Ref{cm})
	if a != nil || !slices.Equal(d, []Ref{sec}) {
		t.Fatalf("dropped = %v, want [%v]", d, sec)
	}
	if s.IsReferenced(sec) {
		t.Fatal("secret still referenced after the pod stopped using it")
	}
	pod2 := Ref{Kind: "Pod", Namespace: "ns", Name: "q"}
	s.SetReferences(pod2, []Ref{cm})
	s.Forget(pod)
	if got := s.ReferencedBy(cm); !slices.Equal(got, []Ref{pod2}) {
		t.Fatalf("ReferencedBy = %v, want [%v]", got, pod2)
	}
}

func TestStoreNames(t *testing.T) {
	s := NewMemory()
	r := Ref{Kind: "Pod", Namespace: "ns", Name: "p"}
	s.Record(r, "p-x-ns-x-vc")
	if n, ok := s.HostName(r); !ok || n != "p-x-ns-x-vc" {
		t.Fatalf("HostName = %q, %v", n, ok)
	}
	if got, ok := s.VirtualOf("Pod", "p-x-ns-x-vc"); !ok || got != r {
		t.Fatalf("VirtualOf = %v, %v", got, ok)
	}
	if _, ok := s.VirtualOf("Secret", "p-x-ns-x-vc"); ok {
		t.Fatal("VirtualOf matched another kind")
	}
	s.Forget(r)
	if _, ok := s.HostName(r); ok {
		t.Fatal("HostName after Forget")
	}
}

func TestStorePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mappings.db")
	s, err := Open(path, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	pod := Ref{Kind: "Pod", Namespace: "ns", Name: "p"}
	sec := Ref{Kind: "Secret", Namespace: "ns", Name: "s"}
	gone := Ref{Kind: "Pod", Namespace: "ns", Name: "gone"}
	s.Record(pod, "p-x-ns-x-vc")
	s.Record(gone, "gone-x-ns-x-vc")
	s.SetReferences(pod, []Ref{sec})
	s.Forget(gone)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, ok := s.HostName(pod); !ok || n != "p-x-ns-x-vc" {
		t.Fatalf("after reopen HostName = %q, %v", n, ok)
	}
	if _, ok := s.HostName(gone); ok {
		t.Fatal("forgotten mapping came back after reopen")
	}
	if !s.IsReferenced(sec) {
		t.Fatal("reference lost after reopen")
	}
}
