// Command pause is the sandbox ("pause") container of the local real node: it holds a Pod's
// namespaces open and does nothing else. registry.k8s.io/pause cannot be pulled offline, so
// hack/build-tools.sh builds this one and `binnacle cluster up --real-node` pushes it to the
// cluster's registry as the runtime's sandbox image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	// As PID 1 of a Pod's shared PID namespace it also reaps orphans.
	reap := make(chan os.Signal, 8)
	signal.Notify(reap, syscall.SIGCHLD)
	for {
		select {
		case <-sigs:
			os.Exit(0)
		case <-reap:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
