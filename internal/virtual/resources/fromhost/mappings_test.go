package fromhost

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func nn(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

func TestMappings(t *testing.T) {
	m, err := ParseMappings(map[string]string{
		"foo/*":     "bar/*",
		"foo/obj":   "bar/renamed",
		"":          "own/*",
		"/special":  "elsewhere/special",
		"other/one": "bar/one-from-other",
	}, "vc-ns")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host, virtual types.NamespacedName
		ok            bool
	}{
		{nn("foo", "a"), nn("bar", "a"), true},
		{nn("foo", "obj"), nn("bar", "renamed"), true},
		{nn("vc-ns", "x"), nn("own", "x"), true},
		{nn("vc-ns", "special"), nn("elsewhere", "special"), true},
		{nn("other", "one"), nn("bar", "one-from-other"), true},
		{nn("other", "two"), types.NamespacedName{}, false},
	} {
		v, ok := m.Virtual(tc.host)
		if v != tc.virtual || ok != tc.ok {
			t.Errorf("Virtual(%s) = %s, %v; want %s, %v", tc.host, v, ok, tc.virtual, tc.ok)
		}
		if !tc.ok {
			continue
		}
		if h, ok := m.Host(tc.virtual); !ok || h != tc.host {
			t.Errorf("Host(%s) = %s, %v; want %s", tc.virtual, h, ok, tc.host)
		}
	}
	if _, ok := m.Host(nn("bar", "obj")); ok {
		t.Error("Host(bar/obj): foo/obj is copied as bar/renamed, not as bar/obj")
	}
	if got := m.HostNamespaces(); !reflect.DeepEqual(got, []string{"foo", "other", "vc-ns"}) {
		t.Errorf("HostNamespaces = %v", got)
	}
}

func TestMappingsErrors(t *testing.T) {
	for _, tc := range []struct {
		byName map[string]string
		want   string
	}{
		{nil, "no entry"},
		{map[string]string{"foo": "bar/*"}, `"foo": the host side must be`},
		{map[string]string{"foo/*": "bar"}, `"foo/*": the virtual side "bar"`},
		{map[string]string{"foo/*": "bar/x"}, "a whole namespace maps to a whole namespace"},
		{map[string]string{"foo/x": "bar/*"}, "a whole namespace maps to a whole namespace"},
		{map[string]string{"foo/*": "Bar_/*"}, "is not a namespace name"},
		{map[string]string{"a/*": "same/*", "b/*": "same/*"}, "both map to virtual namespace same"},
	} {
		_, err := ParseMappings(tc.byName, "vc-ns")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseMappings(%v) error %v, want %q", tc.byName, err, tc.want)
		}
	}
}
