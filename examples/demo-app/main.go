// Command demo-app is the web server of clustersync's demo (examples/demo),
// built into the image ghcr.io/clustersync/demo-app by `make image`. It has
// no dependencies beyond the standard library, so the image holds one
// static binary.
//
//	demo-app serve [--addr :8080] [--content DIR] [--secrets DIR]
//	    Serves GET / : the files of DIR --content (a mounted ConfigMap), the
//	    names — never the values — of the files of --secrets (a mounted
//	    Secret), the pod's name (env POD_NAME, else the hostname). GET
//	    /healthz answers "ok" (a readiness probe).
//	demo-app get [--service-account] URL
//	    Prints the body of an HTTP GET of URL and exits 0 on a 2xx answer:
//	    a client for checks run inside a pod (the image has no shell, curl
//	    or wget). --service-account sends the pod's service-account token
//	    and trusts the pod's cluster CA (both from
//	    /var/run/secrets/kubernetes.io/serviceaccount), to call the API
//	    server as the pod.
//	demo-app lookup NAME
//	    Resolves NAME with the pod's resolver (/etc/resolv.conf: search
//	    paths, ndots) and prints its addresses, one per line, sorted; exits
//	    1 when the name does not resolve.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: demo-app serve [--addr :8080] [--content DIR] [--secrets DIR] | demo-app get [--service-account] URL | demo-app lookup NAME")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		addr := fs.String("addr", ":8080", "address to listen on")
		content := fs.String("content", "/content", "folder whose files the page shows (a mounted ConfigMap)")
		secrets := fs.String("secrets", "/secrets", "folder whose file names the page lists (a mounted Secret)")
		_ = fs.Parse(os.Args[2:])
		if err := serve(*addr, *content, *secrets); err != nil {
			log.Fatal(err)
		}
	case "get":
		fs := flag.NewFlagSet("get", flag.ExitOnError)
		sa := fs.Bool("service-account", false, "authenticate as the pod's service account, trusting its cluster CA")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			fmt.Fprintln(os.Stderr, "usage: demo-app get [--service-account] URL")
			os.Exit(2)
		}
		if err := get(fs.Arg(0), *sa, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "demo-app:", err)
			os.Exit(1)
		}
	case "lookup":
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: demo-app lookup NAME")
			os.Exit(2)
		}
		if err := lookup(os.Args[2], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "demo-app:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "demo-app: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

// serve runs the web server until SIGTERM or SIGINT.
func serve(addr, content, secrets string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page(content, secrets))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	log.Printf("demo-app: serving on %s", addr)
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// page renders the demo page: the content files, the secret key names and
// the pod's name.
func page(content, secrets string) string {
	var b strings.Builder
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	fmt.Fprintf(&b, "<!doctype html>\n<title>clustersync demo</title>\n<p>Served by pod %s</p>\n", html.EscapeString(pod))
	for _, name := range files(content) {
		data, err := os.ReadFile(filepath.Join(content, name))
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "<section><h2>%s</h2>\n%s</section>\n", html.EscapeString(name), data)
	}
	keys := files(secrets)
	fmt.Fprintf(&b, "<p>Secret keys read: %s</p>\n", html.EscapeString(strings.Join(keys, ", ")))
	return b.String()
}

// files lists the regular files of dir by name, skipping the dot-entries a
// mounted ConfigMap or Secret has ("..data" and friends).
func files(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.IsDir() {
			continue
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// serviceAccountDir is where the kubelet mounts a pod's service-account
// token and cluster CA.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// get writes the body of GET url to w; an answer outside 2xx is an error.
// With sa, the request carries the pod's service-account token and the
// server must present a certificate of the pod's cluster CA.
func get(url string, sa bool, w io.Writer) error {
	client := &http.Client{Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if sa {
		token, err := os.ReadFile(filepath.Join(serviceAccountDir, "token"))
		if err != nil {
			return err
		}
		ca, err := os.ReadFile(filepath.Join(serviceAccountDir, "ca.crt"))
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return errors.New(serviceAccountDir + "/ca.crt holds no certificate")
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return errors.New(resp.Status)
	}
	return nil
}

// lookup prints the addresses name resolves to, sorted, one per line. The
// pure-Go resolver reads /etc/resolv.conf as the C library would.
func lookup(name string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return err
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		fmt.Fprintln(out, a)
	}
	return nil
}
