// Command pause is the sandbox ("pause") container of clustersync's local
// real node, built into the image ghcr.io/clustersync/pause: it holds a
// pod's namespaces by sleeping until it is told to stop. Nothing can be
// pulled from public registries on the machines clustersync's tests run
// on, so the project builds its own. It reaps no children: nothing else
// runs in a sandbox container.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
