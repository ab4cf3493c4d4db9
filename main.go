// Command multicache runs the multi-store cache operator: reconcilers feed one in-memory,
// aggregated view of the cluster (nodes, pods, pod groups, disruption budgets, movements,
// reservations) that sibling controllers query in-process and operators observe through CR
// status, metrics and a debug dump.
//
// With --local it first starts an embedded control plane (the real kube-apiserver and etcd
// that `make envtest-assets` builds), installs the CRDs, writes a kubeconfig and runs
// against it.
//
// It is the same public builder an out-of-tree main uses (pkg/multicache), with the
// built-in stores and siblings only: see docs/EXTENDING.md.
package main

import (
	"os"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

func main() {
	os.Exit(multicache.NewCommand().Run(os.Args[1:]))
}
