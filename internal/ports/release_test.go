package ports

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/proc"
)

// serverEnv makes the test binary a server like kube-apiserver (see
// TestMain): it listens on the port it names, fills 256 MiB of heap, runs
// 32 busy goroutines and prints "ready".
const serverEnv = "CLUSTERSYNC_PORTS_TEST_SERVER"

func TestMain(m *testing.M) {
	if port := os.Getenv(serverEnv); port != "" {
		serve(port)
	}
	os.Exit(m.Run())
}

func serve(port string) {
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer l.Close()
	heap := make([][]byte, 256)
	for i := range heap {
		heap[i] = make([]byte, 1<<20)
		for j := 0; j < len(heap[i]); j += 4096 {
			heap[i][j] = 1
		}
	}
	for range 32 {
		go func() {
			for {
				time.Sleep(time.Millisecond)
			}
		}()
	}
	fmt.Println("ready")
	select {}
}

// startServer starts the test binary as a server on port and returns it
// once it listens.
func startServer(t *testing.T, port int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("server on %d: %q, %v", port, line, err)
	}
	return cmd
}

// TestWaitReleased shows why a restart waits for the port: a SIGKILLed
// server's main thread is a zombie (proc.Running is false) before the
// kernel has closed its listening socket, and a new server started then
// fails with "address already in use". After WaitReleased, a new listener
// always gets the port.
func TestWaitReleased(t *testing.T) {
	ports, err := Default().Reserve(t.Context(), t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	port := ports[0]
	const kills = 10
	held := 0
	for range kills {
		srv := startServer(t, port)
		pid := srv.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for proc.Running(pid) {
			// The parent (this test) has not reaped it: once its main
			// thread has exited it stays a zombie.
		}
		if !Bindable(port) {
			held++
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err := WaitReleased(ctx, port)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("listen after WaitReleased: %v", err)
		}
		l.Close()
		_ = srv.Wait()
	}
	t.Logf("the port was still held when the main thread had exited in %d of %d kills", held, kills)
}

// TestWaitReleasedTaken checks that a port another live process listens on
// is reported at once, naming that process, instead of being waited for.
func TestWaitReleasedTaken(t *testing.T) {
	ports, err := Default().Reserve(t.Context(), t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, ports[0])
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err = WaitReleased(ctx, ports[0])
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", srv.Process.Pid)) || !strings.Contains(err.Error(), "LISTEN") {
		t.Fatalf("WaitReleased = %v, want an error naming pid %d", err, srv.Process.Pid)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s to report the other process", took)
	}
	t.Log(err)
	// A process that is being stopped is waited for instead.
	go func() { time.Sleep(300 * time.Millisecond); _ = srv.Process.Kill() }()
	if err := WaitReleased(ctx, ports[0], srv.Process.Pid); err != nil {
		t.Fatalf("WaitReleased with the server being stopped: %v", err)
	}
}
