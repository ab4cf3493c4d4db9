// Command multicache-scheduler is kube-scheduler with the multicache plugin: the cluster's
// scheduler honours the places multicache keeps (Reservations, deleted pods' holds) and its
// pod groups. Every kube-scheduler flag works; without --config the default profile
// enables the plugin.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/seed0f91f25e/multicache/scheduler/command"
)

func main() {
	os.Exit(cli.Run(command.New()))
}
