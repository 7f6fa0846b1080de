package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
)

// faultKind is one of the faults the test injects.
type faultKind int

const (
	syncerKill faultKind = iota
	podDelete
	apiserverRestart
)

func (f faultKind) String() string {
	return [...]string{"syncer SIGKILLed", "control plane pod deleted", "host kube-apiserver restarted"}[f]
}

// fault is one fault and the point of the churn it comes at: when the
// generator has sent that many creates.
type fault struct {
	kind     faultKind
	atCreate int
}

// faultRand is the random source of the fault plan of seed.
func faultRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed+1, seed)) }

// planFaults spreads the faults over the creates 5% to 90% of the way,
// in an order drawn from rng.
func planFaults(rng *rand.Rand, objects, kills, deletes, restarts int) []fault {
	var kinds []faultKind
	for range kills {
		kinds = append(kinds, syncerKill)
	}
	for range deletes {
		kinds = append(kinds, podDelete)
	}
	for range restarts {
		kinds = append(kinds, apiserverRestart)
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	lo, hi := objects/20, objects*9/10
	at := make([]int, len(kinds))
	for i := range at {
		at[i] = lo + rng.IntN(max(1, hi-lo))
	}
	slices.Sort(at)
	plan := make([]fault, len(kinds))
	for i := range plan {
		plan[i] = fault{kind: kinds[i], atCreate: at[i]}
	}
	return plan
}

// injector inflicts faults on the virtual cluster's control plane pod and
// on the host.
type injector struct {
	host       client.Client
	cri        runtimeapi.RuntimeServiceClient
	hostDir    string // the host cluster's state folder
	logf       func(format string, args ...any)
	lastPID    int
	restarts   int
	done       map[faultKind]int
	lastFaults time.Time // when the last fault was inflicted
}

// inflict inflicts f, waiting first (up to a few minutes) for what it
// needs: a running syncer to kill, a control plane pod to delete.
func (in *injector) inflict(ctx context.Context, f fault) error {
	start := time.Now()
	var err error
	switch f.kind {
	case syncerKill:
		err = in.killSyncer(ctx)
	case podDelete:
		err = in.deletePod(ctx)
	case apiserverRestart:
		err = in.restartAPIServer(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.kind, err)
	}
	in.done[f.kind]++
	in.lastFaults = time.Now()
	in.logf("fault at create %d: %s (%d so far; %.1f s)", f.atCreate, f.kind, in.done[f.kind], time.Since(start).Seconds())
	return nil
}

// killSyncer SIGKILLs the syncer process of the control plane pod (found
// over CRI), once one runs that was not killed already.
func (in *injector) killSyncer(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pid, err := containerPID(ctx, in.cri, hostNamespace, "syncer")
		if err != nil || pid <= 0 || pid == in.lastPID {
			return false, nil
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return false, nil // exited meanwhile
		}
		in.lastPID = pid
		return true, nil
	})
}

// deletePod deletes the control plane pod, once one exists that is not
// being deleted; the StatefulSet makes it again.
func (in *injector) deletePod(ctx context.Context) error {
	return retry(ctx, 3*time.Minute, func(ctx context.Context) error {
		var pod corev1.Pod
		if err := in.host.Get(ctx, client.ObjectKey{Namespace: hostNamespace, Name: vclusterName + "-0"}, &pod); err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil {
			return errRetry
		}
		uid := pod.UID
		return in.host.Delete(ctx, &pod, client.Preconditions{UID: &uid})
	})
}

// restartAPIServer stops the host's kube-apiserver process (SIGKILL, a
// crash, and SIGTERM, a graceful stop, in turns) and starts it again as a
// user would: `clustersync dev up` finds it gone and has kwokctl start it
// with its flags of before (hostcluster.Create starts the components of
// an existing cluster that do not run).
func (in *injector) restartAPIServer(ctx context.Context) error {
	c, err := hostcluster.Open(in.hostDir)
	if err != nil {
		return err
	}
	pidFile := filepath.Join(c.KwokDir(), "pids", "kube-apiserver.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("%s: %q", pidFile, data)
	}
	sig := syscall.SIGKILL
	if in.restarts%2 == 1 {
		// It stops taking requests at once but waits for the ones in
		// flight (up to a minute).
		sig = syscall.SIGTERM
	}
	in.restarts++
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	stopped := time.Now()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		return !running(pid), nil
	}); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("kube-apiserver (pid %d) still running 90 s after %s", pid, sig)
	}
	in.logf("host kube-apiserver (pid %d) stopped by %s in %.1f s; dev up", pid, sig, time.Since(stopped).Seconds())
	out, err := cliErr("dev", "up")
	if err != nil {
		return fmt.Errorf("dev up: %v\n%s", err, out)
	}
	return nil
}

// running tells whether process pid runs (an exited one that nobody reaped
// yet is a zombie: not running).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}
