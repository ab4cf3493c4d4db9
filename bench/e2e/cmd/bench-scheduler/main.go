// Command bench-scheduler is `make bench-scheduler`: the multicache scheduler
// (bin/multicache-scheduler, kube-scheduler v1.37.1 with the multicache plugin) against the
// stock kube-scheduler v1.37.1 on the same cluster. Every round, each scheduler in turn
// (the order alternates) gets a fresh kube-apiserver and etcd with -nodes Ready nodes, is
// started with the same flags and, once its cache holds every node, -pods pending pods are
// created at once. It measures pods bound per second, the p50/p99 time from a pod's
// creation to its binding, the scheduler's CPU over the run and its RSS after a settle
// and, with -multicache, the RSS of multicache's operator alone on the stock scheduler's
// cluster (the multicache scheduler replaces the two), and prints a markdown report (also
// written to -out). See package e2e (schedbench.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seed0f91f25e/multicache/bench/e2e"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scheduler:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		assets  = flag.String("assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (bin/k8s)")
		repo    = flag.String("repo", "../..", "the main module's directory (CRDs, commit)")
		stock   = flag.String("scheduler", "", "the stock kube-scheduler binary (default: kube-scheduler in -assets)")
		mcBin   = flag.String("multicache-scheduler", "", "the multicache scheduler binary (make scheduler builds bin/multicache-scheduler)")
		opBin   = flag.String("multicache", "", "multicache's operator binary (bin/multicache): when set, measured alone after the stock scheduler's run of every round, for the multicache scheduler's RSS against the two apart")
		nodes   = flag.Int("nodes", 100, "nodes in the cluster")
		pods    = flag.Int("pods", 1000, "pending pods created at once")
		rounds  = flag.Int("rounds", 2, "rounds; each measures every scheduler once on a fresh cluster")
		writers = flag.Int("writers", 32, "parallel writers creating the nodes and the pods")
		qps     = flag.Int("kube-api-qps", 5000, "both schedulers' --kube-api-qps (burst twice that); 0 keeps kube-scheduler's default 50/100, which caps binding at ~50 pods/s")
		timeout = flag.Duration("timeout", 10*time.Minute, "bounds the wait for a scheduler to be up and for every pod to be bound")
		settle  = flag.Duration("settle", 10*time.Second, "how long a scheduler runs after the last binding before its RSS is read")
		dir     = flag.String("dir", "", "directory for logs (default: a new temporary directory)")
		out     = flag.String("out", "", "also write the markdown report to this file")
	)
	flag.Parse()
	// The commit is read now, when the Makefile has just built the binaries: the tree may
	// move on during a long run.
	machine := harness.Machine(*repo)
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime; progress goes to stderr
	if *assets == "" || *mcBin == "" {
		return fmt.Errorf("-assets (or KUBEBUILDER_ASSETS) and -multicache-scheduler are required; run it with `make bench-scheduler`")
	}
	if *nodes <= 0 || *pods <= 0 || *rounds <= 0 || *writers <= 0 {
		return fmt.Errorf("-nodes, -pods, -rounds and -writers must be positive")
	}
	if *stock == "" {
		*stock = *assets + "/kube-scheduler"
	}
	if err := e2e.NeedBinaries([2]string{*stock, "kube-scheduler"}, [2]string{*mcBin, "scheduler"}, [2]string{*opBin, "build"}); err != nil {
		return err
	}
	subjects := []e2e.Subject{
		e2e.SchedulerFlagsSubject(e2e.StockSchedulerName, *stock, *qps),
		e2e.SchedulerFlagsSubject(e2e.MulticacheSchedulerName, *mcBin, *qps),
	}
	var operator *e2e.Subject
	if *opBin != "" {
		s := e2e.MulticacheSubject(*opBin, "--leader-elect=false")
		operator = &s
	}
	ctx, stop, err := e2e.StartCommand("bench-scheduler", dir)
	if err != nil {
		return err
	}
	defer stop()
	res, err := e2e.RunSchedBench(ctx, e2e.SchedBenchConfig{
		Assets: *assets, RepoRoot: *repo, Dir: *dir, Schedulers: subjects, Operator: operator,
		Nodes: *nodes, Pods: *pods, Rounds: *rounds, Writers: *writers,
		Timeout: *timeout, Settle: *settle, Log: e2e.NewElapsedWriter(os.Stderr),
	})
	var b strings.Builder
	e2e.WriteSchedBenchReport(&b, res, machine)
	return e2e.EmitReport("bench-scheduler", b.String(), err, *out)
}
