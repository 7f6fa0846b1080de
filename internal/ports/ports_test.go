package ports

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestPick(t *testing.T) {
	band := Band{First: 100, Last: 110}
	inUse := func(busy ...int) func(int) bool { return func(p int) bool { return slices.Contains(busy, p) } }
	for _, tc := range []struct {
		name    string
		exclude []Band
		held    []int
		inUse   func(int) bool
		n       int
		want    []int
		wantErr string
	}{
		{name: "lowest first", n: 3, want: []int{100, 101, 102}},
		{name: "held skipped", held: []int{100, 102}, n: 3, want: []int{101, 103, 104}},
		{name: "in use skipped", inUse: inUse(101), n: 2, want: []int{100, 102}},
		{name: "excluded ranges skipped", exclude: []Band{{First: 95, Last: 104}, {First: 106, Last: 106}}, n: 3, want: []int{105, 107, 108}},
		{name: "band exhausted", exclude: []Band{{First: 100, Last: 108}}, held: []int{109}, n: 2, wantErr: "2 free ports wanted in 100-110 (minus 100-108, the leased and the ones in use), 1 found"},
		{name: "none wanted", n: 0, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := map[int]bool{}
			for _, p := range tc.held {
				held[p] = true
			}
			got, err := pick(band, tc.exclude, held, tc.inUse, tc.n)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("pick = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseBand(t *testing.T) {
	for in, want := range map[string]Band{"32768\t60999\n": {32768, 60999}, "1024 65535": {1024, 65535}} {
		if got, err := parseBand(in); err != nil || got != want {
			t.Errorf("parseBand(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1", "a b", "5 4"} {
		if _, err := parseBand(in); err == nil {
			t.Errorf("parseBand(%q) succeeded", in)
		}
	}
}

func TestParseSocket(t *testing.T) {
	for _, tc := range []struct {
		line  string
		port  int
		want  Holder
		inode string
		ok    bool
	}{
		{line: "   0: 0100007F:4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0",
			port: 20001, want: Holder{State: "LISTEN", Local: "127.0.0.1:20001"}, inode: "4242", ok: true},
		{line: "   1: 0100007F:4E21 0100007F:9C40 06 00000000:00000000 03:00000F1A 00000000     0        0 0 3 0000000000000000",
			port: 20001, want: Holder{State: "TIME_WAIT", Local: "127.0.0.1:20001"}, inode: "0", ok: true},
		{line: "   2: 00000000000000000000000000000000:4E21 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0",
			port: 20001, want: Holder{State: "LISTEN", Local: "[::]:20001"}, inode: "77", ok: true},
		{line: "   3: 0100007F:4E22 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4243 1",
			port: 20001, ok: false},
		{line: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode", port: 20001, ok: false},
	} {
		h, inode, ok := parseSocket(tc.line, tc.port)
		if ok != tc.ok || (ok && (h != tc.want || inode != tc.inode)) {
			t.Errorf("parseSocket(%q) = %+v, %q, %v; want %+v, %q, %v", tc.line, h, inode, ok, tc.want, tc.inode, tc.ok)
		}
	}
}

// registry is a registry of its own for t, handing out ports of band.
func registry(t *testing.T, band Band) *Registry {
	return &Registry{Dir: filepath.Join(t.TempDir(), "leases"), Band: band, InUse: func(int) bool { return false }}
}

func TestRegistry(t *testing.T) {
	ctx := t.Context()
	r := registry(t, Band{First: 100, Last: 105})
	a, b := t.TempDir(), t.TempDir()
	pa, err := r.Reserve(ctx, a, 2)
	if err != nil || !slices.Equal(pa, []int{100, 101}) {
		t.Fatalf("Reserve(a) = %v, %v", pa, err)
	}
	pb, err := r.Reserve(ctx, b, 3)
	if err != nil || !slices.Equal(pb, []int{102, 103, 104}) {
		t.Fatalf("Reserve(b) = %v, %v; want the ports after a's", pb, err)
	}
	if _, err := r.Reserve(ctx, b, 2); err == nil {
		t.Fatal("Reserve of 2 more with one port left succeeded")
	}
	if got := r.Owner(103); got != b {
		t.Errorf("Owner(103) = %q, want %q", got, b)
	}
	if err := r.Hold(ctx, a, []int{101, 103}); err == nil || !strings.Contains(err.Error(), "port 103") || !strings.Contains(err.Error(), b) {
		t.Errorf("Hold of b's port 103 for a: %v, want an error naming the port and b", err)
	}
	if err := r.Hold(ctx, a, []int{105}); err != nil {
		t.Fatal(err)
	}
	// b's folder is gone: its lease ends, its ports go to the next owner.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	c := t.TempDir()
	pc, err := r.Reserve(ctx, c, 3)
	if err != nil || !slices.Equal(pc, []int{102, 103, 104}) {
		t.Fatalf("Reserve(c) after b's folder was removed = %v, %v; want b's ports", pc, err)
	}
	if err := r.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := r.Owner(100); got != "" {
		t.Errorf("Owner(100) after Release(a) = %q", got)
	}
	d := t.TempDir()
	if got, err := r.Ensure(ctx, d, 1); err != nil || !slices.Equal(got, []int{100}) {
		t.Errorf("Ensure(d, 1) = %v, %v; want a's released port 100", got, err)
	}
	if got, err := r.Ensure(ctx, d, 1); err != nil || !slices.Equal(got, []int{100}) {
		t.Errorf("Ensure(d, 1) again = %v, %v; want the same port", got, err)
	}
	if got, err := r.Ensure(ctx, d, 2); err != nil || !slices.Equal(got, []int{100, 101}) {
		t.Errorf("Ensure(d, 2) = %v, %v; want one more", got, err)
	}
	if _, err := r.Reserve(ctx, "relative/dir", 1); err == nil {
		t.Error("Reserve for a relative owner succeeded")
	}
	if _, err := r.Reserve(ctx, filepath.Join(c, "missing"), 1); err == nil {
		t.Error("Reserve for a missing owner succeeded")
	}
}

// TestReserveConcurrent reserves from many registries of one folder at once
// (each opens the lock file itself, as another process would): no port is
// handed out twice.
func TestReserveConcurrent(t *testing.T) {
	base := registry(t, Band{First: 1000, Last: 1999})
	var mu sync.Mutex
	seen := map[int]string{}
	var wg sync.WaitGroup
	for range 16 {
		owner := t.TempDir()
		wg.Go(func() {
			r := *base
			got, err := r.Reserve(context.Background(), owner, 5)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range got {
				if other, ok := seen[p]; ok {
					t.Errorf("port %d handed to %s and %s", p, other, owner)
				}
				seen[p] = owner
			}
		})
	}
	wg.Wait()
	if len(seen) != 80 {
		t.Errorf("%d ports handed out, want 80", len(seen))
	}
}

// TestDefaultExcludes checks the machine's registry never hands out a port
// of the NodePort range or of the kernel's ephemeral range.
func TestDefaultExcludes(t *testing.T) {
	r := Default()
	if !slices.Contains(r.Exclude, NodePortBand()) {
		t.Errorf("Exclude %v lacks the NodePort range", r.Exclude)
	}
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		t.Skipf("no %s on this system", ephemeralRangeFile)
	}
	eph, err := parseBand(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Exclude, eph) {
		t.Errorf("Exclude %v lacks the ephemeral range %v", r.Exclude, eph)
	}
}
