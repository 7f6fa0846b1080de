package ports

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bindable reports whether a server could listen on port now, on every
// address and on loopback (the local servers listen on one or the other):
// it listens on both with SO_REUSEADDR, as Go's servers do, and closes
// them at once.
func Bindable(port int) bool {
	for _, addr := range []string{":", "127.0.0.1:"} {
		l, err := net.Listen("tcp", addr+strconv.Itoa(port))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// Holder is a TCP socket bound to a port, and the process holding it.
type Holder struct {
	// PID is the process whose file table holds the socket; 0 when none
	// does (the socket of a process that is exiting, or one being closed).
	PID int
	// Command is the process's command line, shortened.
	Command string
	// State is the socket's TCP state, e.g. LISTEN, ESTABLISHED.
	State string
	// Local is the socket's local address, e.g. 127.0.0.1:20001.
	Local string
}

// String is "pid 123 (etcd --data-dir …) LISTEN 127.0.0.1:20001".
func (h Holder) String() string {
	if h.PID == 0 {
		return fmt.Sprintf("no process (exiting or closing) %s %s", h.State, h.Local)
	}
	return fmt.Sprintf("pid %d (%s) %s %s", h.PID, h.Command, h.State, h.Local)
}

// tcpState names the kernel's TCP state number of /proc/net/tcp
// (include/net/tcp_states.h); an unknown one is returned as it is.
func tcpState(hexState string) string {
	names := [...]string{1: "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV"}
	if n, err := strconv.ParseUint(hexState, 16, 8); err == nil && int(n) < len(names) && names[n] != "" {
		return names[n]
	}
	return hexState
}

// Holders returns the TCP sockets whose local port is port, read from
// /proc/net/tcp and /proc/net/tcp6, with the process of each, found in
// /proc/PID/fd (Linux; elsewhere an error). It is for error messages: the
// answer may be out of date as soon as it is read.
func Holders(port int) ([]Holder, error) {
	var hs []Holder
	inodes := map[string]int{} // inode → index in hs
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			return nil, fmt.Errorf("ports: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			h, inode, ok := parseSocket(line, port)
			if !ok {
				continue
			}
			if inode != "0" {
				inodes["socket:["+inode+"]"] = len(hs)
			}
			hs = append(hs, h)
		}
	}
	if len(inodes) == 0 {
		return hs, nil
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if i, ok := inodes[target]; err == nil && ok && hs[i].PID == 0 {
				hs[i].PID, hs[i].Command = pid, command(pid)
			}
		}
	}
	return hs, nil
}

// parseSocket parses one line of /proc/net/tcp[6] ("sl local rem st … uid
// timeout inode …") and reports whether its local port is port.
func parseSocket(line string, port int) (Holder, string, bool) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return Holder{}, "", false
	}
	host, p, ok := strings.Cut(f[1], ":")
	if !ok {
		return Holder{}, "", false
	}
	if n, err := strconv.ParseUint(p, 16, 16); err != nil || int(n) != port {
		return Holder{}, "", false
	}
	return Holder{State: tcpState(f[3]), Local: netip.AddrPortFrom(procAddr(host), uint16(port)).String()}, f[9], true
}

// procAddr decodes an address of /proc/net/tcp[6]: hex, each 32-bit word
// in the machine's byte order (little-endian on the machines we run on).
func procAddr(s string) netip.Addr {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}
	}
	for i := 0; i < len(b); i += 4 {
		slices.Reverse(b[i : i+4])
	}
	a, _ := netip.AddrFromSlice(b)
	return a.Unmap()
}

// command is pid's command line, its arguments joined by spaces and cut to
// 100 bytes.
func command(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// Describe says who holds port, for an error message: each socket bound to
// it and its process, "nothing is bound to it now", or why it cannot tell.
func Describe(port int) string {
	hs, err := Holders(port)
	switch {
	case err != nil:
		return fmt.Sprintf("who holds port %d is unknown: %v", port, err)
	case len(hs) == 0:
		return fmt.Sprintf("nothing is bound to port %d now", port)
	}
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.String()
	}
	return fmt.Sprintf("port %d is held by: %s", port, strings.Join(s, "; "))
}

// WaitReleased waits until port can be bound again (Bindable), at most
// until ctx ends, after the server that listened on it was stopped.
//
// A killed process's sockets outlive the exit of its main thread: the
// kernel closes them when the last of its threads has exited, which for a
// large multi-threaded server (kube-apiserver, etcd) takes milliseconds
// more on an idle machine and longer on a busy one, while /proc already
// shows the main thread as a zombie. A new server started in that window
// fails with "bind: address already in use" (TestWaitReleased shows it).
//
// A live process listening on port, other than the ones in stopped, is
// not waited for: WaitReleased returns at once with an error naming it.
func WaitReleased(ctx context.Context, port int, stopped ...int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var lastCheck time.Time
	for !Bindable(port) {
		if time.Since(lastCheck) > 200*time.Millisecond {
			lastCheck = time.Now()
			if hs, err := Holders(port); err == nil {
				for _, h := range hs {
					if h.PID != 0 && h.State == "LISTEN" && !slices.Contains(stopped, h.PID) {
						return fmt.Errorf("ports: port %d is taken by another process: %s", port, h)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ports: port %d still not released (%w); %s", port, ctx.Err(), Describe(port))
		case <-tick.C:
		}
	}
	return nil
}

// addrInUse matches Go's bind error in a server's log or error and
// captures the port.
var addrInUse = regexp.MustCompile(`:(\d+): bind: address already in use`)

// ExplainInUse explains each "bind: address already in use" of text (a
// server's log lines or error): who holds the port now and which state
// folder leases it, one line per port.
func (r *Registry) ExplainInUse(text string) []string {
	var out []string
	seen := map[int]bool{}
	for _, m := range addrInUse.FindAllStringSubmatch(text, -1) {
		port, _ := strconv.Atoi(m[1])
		if seen[port] {
			continue
		}
		seen[port] = true
		owner := "no state folder"
		if o := r.Owner(port); o != "" {
			owner = o
		}
		out = append(out, fmt.Sprintf("%s; leased to %s", Describe(port), owner))
	}
	return out
}
