package testenv

import (
	"net"
	"sync/atomic"
	"testing"

	mdns "github.com/miekg/dns"
)

// ServeDNS answers, on pc (UDP), the A query for name (a fully qualified
// name, "ext.example.") with ip, and every other query with NXDOMAIN,
// until t ends. It returns the count of A queries it got (CoreDNS's loop
// probe is an HINFO query, so it does not count).
func ServeDNS(t testing.TB, pc net.PacketConn, name, ip string) *atomic.Int32 {
	t.Helper()
	var asked atomic.Int32
	srv := &mdns.Server{PacketConn: pc, Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, r *mdns.Msg) {
		m := new(mdns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		if q.Qtype == mdns.TypeA {
			asked.Add(1)
		}
		if q.Name == name && q.Qtype == mdns.TypeA {
			m.Answer = append(m.Answer, &mdns.A{Hdr: mdns.RR_Header{Name: name, Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)})
		} else {
			m.Rcode = mdns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return &asked
}
