package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/test/internal/harness"
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
		pid, err := harness.ContainerPID(ctx, in.cri, hostNamespace, "syncer")
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

// restartAPIServer restarts the host's kube-apiserver, a crash (SIGKILL)
// and a graceful stop (SIGTERM) in turns, with hostcluster's
// RestartAPIServer: it starts the process again with its flags of before
// on the port the cluster keeps leased meanwhile, and starts a fresh
// kube-scheduler with it (see RestartAPIServer for why).
func (in *injector) restartAPIServer(ctx context.Context) error {
	c, err := hostcluster.Open(in.hostDir)
	if err != nil {
		return err
	}
	c.Timeout = 3 * time.Minute
	sig := syscall.SIGKILL
	if in.restarts%2 == 1 {
		sig = syscall.SIGTERM
	}
	in.restarts++
	start := time.Now()
	if err := c.RestartAPIServer(ctx, sig); err != nil {
		return err
	}
	in.logf("host kube-apiserver stopped by %s and started again in %.1f s", sig, time.Since(start).Seconds())
	return nil
}
