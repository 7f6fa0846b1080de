// Command pause is the sandbox ("pause") container of clustersync's local
// real node, built into the image ghcr.io/clustersync/pause, and the
// registry.k8s.io/pause image of the conformance run
// (internal/images.Conformance): it holds a pod's namespaces by sleeping
// until it is told to stop (SIGTERM or SIGINT, exit status 0). Nothing can
// be pulled from public registries on the machines clustersync's tests run
// on, so the project builds its own. As PID 1 of a pod that shares its
// process namespace, it reaps the children that other containers leave
// behind (SIGCHLD). `pause -v` prints its name and exits, to check an image
// without starting a pod.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("clustersync pause")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		reap()
	}
}

// reap collects every child that has exited, without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
