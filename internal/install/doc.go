// Package install holds no code: its tests check what a cluster administrator installs and
// sees, against the real API server. They render dist/install.yaml with `make
// build-installer` and apply it, check that the RBAC roles grant what they claim, that the
// CRDs' names, categories and printer columns are what `kubectl get` needs, that the
// samples' status reaches the API, and that the Grafana dashboard queries only metrics
// multicache exports.
package install
