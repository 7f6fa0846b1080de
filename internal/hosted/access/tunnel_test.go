package access

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

func TestRequiresTunnel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()

	var d net.Dialer
	timeout := func(ctx context.Context, _, _ string) (net.Conn, error) { <-ctx.Done(); return nil, ctx.Err() }
	dnsFail := func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.eks.local", IsNotFound: true}}
	}
	tests := []struct {
		name     string
		dial     DialFunc
		endpoint string
		want     *bool
		err      bool
	}{
		{"reachable endpoint: no tunnel", d.DialContext, "https://" + ln.Addr().String(), boolPtr(false), false},
		{"name does not resolve: tunnel", dnsFail, "https://private.eks.local", boolPtr(true), false},
		{"timeout: tunnel", timeout, "https://slow.eks.local", boolPtr(true), false},
		{"refused: undetermined, retry", d.DialContext, "https://" + closedAddr, nil, true},
		{"not a URL", d.DialContext, "::", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RequiresTunnel(context.Background(), tt.dial, tt.endpoint, 200*time.Millisecond)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("RequiresTunnel = %v, want %v", show(got), show(tt.want))
			}
		})
	}
	// The default port is 443.
	var addr string
	record := func(_ context.Context, _, a string) (net.Conn, error) { addr = a; return nil, errors.New("stop") }
	_, _ = RequiresTunnel(context.Background(), record, "https://abc.gr7.us-west-2.eks.amazonaws.com", time.Second)
	if addr != "abc.gr7.us-west-2.eks.amazonaws.com:443" {
		t.Errorf("dialed %q", addr)
	}
}

func show(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func boolPtr(b bool) *bool { return &b }
