package registry

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/testenv"
)

func testImage(t *testing.T, content string) v1.Image {
	t.Helper()
	l, err := images.Layer([]images.File{{Path: "/data", Mode: 0o644, Data: []byte(content)}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := images.Image([]v1.Layer{l}, images.Config{Entrypoint: []string{"/data"}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// serve runs the registry of dir on a loopback test server.
func serve(t *testing.T, dir string) string {
	t.Helper()
	h, err := Handler(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// An image pushed with go-containerregistry's client is pulled back with
// the same digest and content, also from a registry restarted on the same
// state folder (manifests come back from the journal, blobs from disk).
func TestPushPullRestart(t *testing.T) {
	dir := t.TempDir()
	img := testImage(t, "hello")
	want, _ := img.Digest()
	host := serve(t, dir)
	ref, err := name.ParseReference(host+"/clustersync/test:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	// A second tag of another image, to check the replay keeps both.
	other := testImage(t, "other")
	otherRef, _ := name.ParseReference(host+"/clustersync/test:v2", name.Insecure)
	if err := remote.Write(otherRef, other); err != nil {
		t.Fatal(err)
	}
	pull := func(host, tag string) v1.Hash {
		t.Helper()
		r, _ := name.ParseReference(host+"/clustersync/test:"+tag, name.Insecure)
		got, err := remote.Image(r)
		if err != nil {
			t.Fatalf("pull %s: %v", r, err)
		}
		layers, err := got.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("layers: %v %d", err, len(layers))
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		d, _ := got.Digest()
		return d
	}
	if got := pull(host, "v1"); got != want {
		t.Errorf("pulled %s, pushed %s", got, want)
	}
	restarted := serve(t, dir)
	if got := pull(restarted, "v1"); got != want {
		t.Errorf("after a restart pulled %s, pushed %s", got, want)
	}
	if got, _ := other.Digest(); pull(restarted, "v2") != got {
		t.Error("the second tag was lost in the restart")
	}
}

// A journal line that cannot be read is reported with the file and line.
func TestBadJournal(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "manifests.jsonl"), []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Handler(dir, nil); err == nil || !strings.Contains(err.Error(), "manifests.jsonl line 1") {
		t.Errorf("err = %v", err)
	}
}

// Serve records its address while it serves and removes it when it stops;
// on the pod address it serves pulls only.
func TestServeStatus(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	free, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address to stand for the node's: %v", err)
	}
	podAddr := free.Addr().String()
	free.Close()
	go func() { done <- Serve(ctx, dir, "127.0.0.1:0", podAddr) }()
	deadline := time.Now().Add(10 * time.Second)
	var st Status
	for {
		var ok bool
		if st, ok = Running(dir); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("registry not serving after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.PID != os.Getpid() || !strings.HasPrefix(st.Addr, "127.0.0.1:") {
		t.Errorf("status %+v", st)
	}
	ref, _ := name.ParseReference(st.Addr+"/x/y:z", name.Insecure)
	img := testImage(t, "served")
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	if st.PodAddr != podAddr {
		t.Errorf("pod address %q, want %q", st.PodAddr, podAddr)
	}
	podRef, _ := name.ParseReference(podAddr+"/x/y:z", name.Insecure)
	var got v1.Image
	testenv.Eventually(t, 10*time.Second, func() (err error) { got, err = remote.Image(podRef); return err })
	if d1, _ := got.Digest(); d1 != mustDigest(t, img) {
		t.Errorf("pulled %s from the pod address", d1)
	}
	other, _ := name.ParseReference(podAddr+"/x/y:pushed", name.Insecure)
	if err := remote.Write(other, testImage(t, "not allowed")); err == nil || !strings.Contains(err.Error(), "405") {
		t.Errorf("push to the pod address: %v, want 405", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := Running(dir); ok {
		t.Error("status left behind")
	}
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
