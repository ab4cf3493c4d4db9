package e2e

import (
	"errors"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Env is what every subject is started with.
type Env struct {
	// Kubeconfig reaches the cluster as an administrator.
	Kubeconfig string
	// Dir holds the subjects' logs.
	Dir string
	// Want is the object counts a full cache holds.
	Want Want
	// API, when set, reads what each cold start costs the API server (MeasureColdStart).
	API *APIServer
}

// Want is the number of pods and nodes in the cluster: every subject is full when it holds
// exactly these.
type Want struct {
	Nodes, Pods int
}

// Subject is one program whose cold start is measured.
type Subject struct {
	// Name appears in the tables: informer, kube-scheduler, multicache.
	Name string
	// Start starts a fresh process of the subject against the cluster, logging to logPath.
	Start func(env Env, logPath string) (*Instance, error)
}

// Instance is a running subject and how to read it.
type Instance struct {
	*controlplane.Process
	// MetricsURL serves the subject's Prometheus metrics; Prefixes select the ones Full reads.
	// Polls ask only for those (the name[] filter of client_golang's handler), so that
	// reading them every Poll costs the subject little.
	MetricsURL string
	Prefixes   []string
	// PprofURL is the subject's /debug/pprof (for the heap after GC).
	PprofURL string
	// Full says whether the metrics show every wanted object, and the counts it read.
	Full func(m harness.Metrics, want Want) (bool, string)
}

// count reads a gauge as an int (-1 when absent) for the Full functions.
func count(m harness.Metrics, key string) int {
	v, ok := m[key]
	if !ok {
		return -1
	}
	return int(v)
}

// errExited is returned when a subject ends before it was asked to.
var errExited = errors.New("process exited")
