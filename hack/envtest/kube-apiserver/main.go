// Command kube-apiserver builds the real Kubernetes API server from Go modules so that
// envtest (and `--local`) run against it without downloading release binaries.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
