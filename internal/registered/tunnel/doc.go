// Package tunnel connects the agent of a registered cluster to the management
// server over one websocket reverse tunnel (github.com/rancher/remotedialer),
// as Rancher's cluster agent does
// (https://github.com/rancher/rancher/blob/main/cmd/agent/main.go): the agent
// checks the server's CA against the checksum it was given, dials /v1/connect
// and registers in the same handshake (no second deployment phase), then the
// server dials the downstream API server through the tunnel. The agent
// reconnects with backoff; either end may restart.
package tunnel
