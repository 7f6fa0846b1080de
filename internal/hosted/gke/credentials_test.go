package gke

import (
	"context"
	"strings"
	"testing"
)

// The credential Secret's key is required and must be a service
// account's; a client is made once per Secret content.
func TestCredentials(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		secret map[string][]byte
		want   string
	}{
		{"missing key", map[string][]byte{"other": []byte("x")}, "key " + AuthEncodedJSONField + " (a service account's JSON key) is required"},
		{"not JSON", map[string][]byte{AuthEncodedJSONField: []byte("not json")}, AuthEncodedJSONField},
		{"a user's key", map[string][]byte{AuthEncodedJSONField: []byte(`{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}`)}, AuthEncodedJSONField},
	} {
		if _, err := ServiceAccountCredentials(ctx, tc.secret); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	tok, err := StaticCredentials("t0k")(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tok.Token(ctx); err != nil || got.Value != "t0k" {
		t.Errorf("static token %v, %v; want t0k", got, err)
	}
	factory := NewClientsFactory("http://127.0.0.1:1", StaticCredentials("t"))
	a, err := factory(ctx, map[string][]byte{AuthEncodedJSONField: []byte("a")})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := factory(ctx, map[string][]byte{AuthEncodedJSONField: []byte("a")})
	other, _ := factory(ctx, map[string][]byte{AuthEncodedJSONField: []byte("b")})
	if a != again || a == other {
		t.Errorf("clients %p %p %p: want the same client for the same Secret, another for another", a, again, other)
	}
}
