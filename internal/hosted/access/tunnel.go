package access

import (
	"context"
	"errors"
	"net"
	"net/url"
	"time"
)

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// EndpointDialTimeout is how long tunnel detection waits for the API
// endpoint (Rancher's 30 seconds).
const EndpointDialTimeout = 30 * time.Second

// RequiresTunnel tells whether the management server reaches a cluster's
// API endpoint directly, as Rancher's private-endpoint check does
// (Rancher's EKS driver, https://github.com/rancher/eks-operator): it dials the endpoint's host
// and port (443 when the URL has none). A DNS failure or a timeout means
// the endpoint is private and needs a tunnel (true); a connection means it
// does not (false); any other error leaves it undetermined (nil, with the
// error) and the caller retries later.
func RequiresTunnel(ctx context.Context, dial DialFunc, endpoint string, timeout time.Duration) (*bool, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, errors.New("endpoint " + endpoint + ": not a URL with a host")
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dial(ctx, "tcp", host)
	if err == nil {
		conn.Close()
		no := false
		return &no, nil
	}
	var dnsErr *net.DNSError
	var netErr net.Error
	if errors.As(err, &dnsErr) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		yes := true
		return &yes, nil
	}
	return nil, err
}
