// Command kube-controller-manager builds the real Kubernetes controller manager from Go
// modules, so that `make bench-holds` can run the Deployment and ReplicaSet controllers
// against the same API server as multicache without downloading release binaries.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
