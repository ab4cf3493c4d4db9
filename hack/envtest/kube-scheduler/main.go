// Command kube-scheduler builds the real Kubernetes scheduler from Go modules, so that
// `make bench-e2e` can cold-start it against the same API server as multicache without
// downloading release binaries.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
