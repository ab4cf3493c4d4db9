// Command kubectl builds the real kubectl from Go modules (k8s.io/kubectl, the code of
// k8s.io/kubernetes/cmd/kubectl), so that `make kubectl` gives a newcomer the client of the
// same Kubernetes version as the control plane of `make run`, without a release download.
package main

import (
	"os"

	// Client auth plugins (exec, OIDC), as the released kubectl has them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// The verbosity is set before the command is built, as kubectl's own main does: klog is
	// used while the command (plugins, .kuberc) is constructed.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck // as kubectl's main
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
