// Package e2e measures multicache end to end, as users run it: a separate process against a
// real kube-apiserver, next to anchors started the same way on the same cluster.
//
// One run (Run) starts etcd and kube-apiserver (the binaries `make envtest-assets` builds,
// through internal/harness), populates the cluster through the API (populate.go:
// nodes, ReplicaSets and their bound pods, PodGroups, PDBs, Reservations, NMNodes, CNRs),
// then cold-starts each subject in turn, rotating the order every round (run.go, measure.go):
//
//   - informer: a bare client-go informer for pods and nodes (cmd/informer), the floor;
//   - informer-mc-kinds: bare informers of every kind multicache watches (cmd/informer
//     -kinds=multicache), what the same watches cost without a cache;
//   - kube-scheduler: the real kube-scheduler v1.37.1, leader election off (scheduler.go);
//   - multicache: the operator binary built from the main module (multicache.go);
//   - multicache-baseline, when asked for: another build of it, for a before/after comparison.
//
// For each it records the time until the process holds every object, read from its own
// object-count metric, its CPU seconds until then, its peak and settled RSS and its heap
// after a forced GC (measure.go), and what the start cost kube-apiserver and etcd: their CPU
// and the API server's request mix until full (apiserver.go, apicost.go). With devices
// (Size.DevicesPerNode) the population adds DRA objects (devices.go). Then it drives pod
// churn against multicache at fixed rates and measures how long an API write takes to
// become visible in multicache's cache (churn.go, lag.go). The report (report.go,
// apireport.go) is a markdown table with the ratios of multicache against each anchor.
//
// The module is separate from the bench module (no k8s.io/kubernetes: kube-scheduler is run
// as a binary) and from the main module (the main module must not depend on the benchmark).
// Its path is under github.com/seed0f91f25e/multicache, so it may import that module's
// internal packages.
package e2e
