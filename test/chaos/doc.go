// Package chaos is the fault-injection suite of multicache: against the real API server
// (kube-apiserver and etcd started through internal/harness), two operator replicas run as
// processes (test/chaos/cmd/chaos-operator: the real wiring plus a simulated scheduler in
// replica "a" and a write log), a seeded workload keeps changing pods, reservations, pod
// groups, nodes and the node agents' objects, and faults are injected one after another:
// kill -9 of the leader and of the standby, SIGSTOP of the leader past its lease, API
// server restarts, etcd compaction with a 410 relist, bursts of expiries and deletes, a node
// deleted under its pods, a bind that comes after the assumption expired.
//
// After each fault the workload pauses and the suite measures how long until every
// replica's /debug/cache/compare is empty, then checks the invariants metric, every node's
// charge, the leader's status writes and the replicas' agreement. At the end it checks the
// whole history of Reservation and PodGroup status (recorded through watches), the write
// logs against the lease, and the logs for panics. docs/RELIABILITY.md has the results.
//
// TestChaos runs a short version in `go test ./...`; `make chaos` runs the long one
// (CHAOS_* variables, see FromEnv).
package chaos
