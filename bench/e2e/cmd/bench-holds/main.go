// Command bench-holds is `make bench-holds`: reserve-on-delete end to end.
// It starts the real control plane (kube-apiserver, etcd, kube-scheduler,
// kube-controller-manager with the Deployment and ReplicaSet controllers) and multicache,
// plays the kubelets, rolls a Deployment whose every pod is annotated
// multicache.dev/reserve-on-delete and then scales it down, sampling every node's charge
// in multicache against the API. It prints a markdown report (also written to -out) and
// exits non-zero when a sample charged more than the live pods and the holds still
// awaited, or a hold outlived the bound. See package e2e (holds.go) and BENCHMARKS.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/seed0f91f25e/multicache/bench/e2e"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

func main() {
	err := run(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2) // the flag set printed the error and the usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench-holds:", err)
		os.Exit(1)
	}
}

// errUsage marks a command line the flag set could not parse.
var errUsage = errors.New("usage")

// run parses args, checks them and runs the benchmark; a bad flag fails before anything starts.
func run(args []string) error {
	fs := flag.NewFlagSet("bench-holds", flag.ContinueOnError)
	var (
		assets    = fs.String("assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (bin/k8s)")
		repo      = fs.String("repo", "../..", "the main module's directory (CRDs, commit)")
		mcBin     = fs.String("multicache", "", "the multicache binary (go build -o bin/multicache . in the main module)")
		mcArgs    = fs.String("multicache-args", "", "extra flags of multicache, space-separated")
		schedBin  = fs.String("kube-scheduler", "", "the kube-scheduler binary (default: kube-scheduler in -assets)")
		kcmBin    = fs.String("kube-controller-manager", "", "the kube-controller-manager binary (default: kube-controller-manager in -assets)")
		dir       = fs.String("dir", "", "directory for logs, the kubeconfig and the evidence of any excess (default: a new temporary directory)")
		out       = fs.String("out", "", "also write the markdown report to this file")
		nodes     = fs.Int("nodes", 50, "nodes in the cluster")
		replicas  = fs.Int("replicas", 500, "pods of the Deployment, rolled")
		scaleTo   = fs.Int("scale-to", 250, "pods the Deployment is scaled to after the rollout")
		evict     = fs.Int("force-delete", 25, "pods force-deleted after the scale-down (their replacements are due: a third phase); 0 skips it")
		surge     = fs.String("max-surge", "25%", "maxSurge of the rolling update")
		unavail   = fs.String("max-unavailable", "25%", "maxUnavailable of the rolling update")
		cpu       = fs.String("pod-cpu", "500m", "each pod's CPU request")
		mem       = fs.String("pod-memory", "512Mi", "each pod's memory request")
		period    = fs.Duration("sample", 200*time.Millisecond, "how often multicache's nodes are sampled")
		delay     = fs.Duration("delete-delay", 500*time.Millisecond, "how long a pod being deleted stays before the harness's kubelet removes it")
		settle    = fs.Duration("settle", 5*time.Second, "how long the sampling goes on after the rollout and after the scale-down")
		timeout   = fs.Duration("phase-timeout", 10*time.Minute, "how long the Deployment's creation, rollout and scale-down may each take")
		qps       = fs.Int("controller-qps", 100, "kube-controller-manager's requests per second (burst twice that)")
		verify    = fs.Duration("verify-period", time.Second, "multicache's --verify-period: how often it checks its own invariants during the run (violations are counted and named in the report)")
		failOnBad = fs.Bool("check", true, "exit non-zero when the report's checks fail")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	// The commit is read now, when the Makefile has just built the binaries: the tree may
	// move on during a long run.
	machine := harness.Machine(*repo)
	if *assets == "" || *mcBin == "" {
		return fmt.Errorf("-assets (or KUBEBUILDER_ASSETS) and -multicache are required; run it with `make bench-holds`")
	}
	for _, q := range []struct{ name, v string }{{"-pod-cpu", *cpu}, {"-pod-memory", *mem}} {
		if _, err := resource.ParseQuantity(q.v); err != nil {
			return fmt.Errorf("%s: %q is not a quantity (e.g. 500m, 512Mi): %w", q.name, q.v, err)
		}
	}
	for _, s := range []struct{ name, v string }{{"-max-surge", *surge}, {"-max-unavailable", *unavail}} {
		if v := intstr.Parse(s.v); v.Type == intstr.String && !strings.HasSuffix(v.StrVal, "%") {
			return fmt.Errorf("%s: %q is neither a number of pods nor a percentage (e.g. 25%%)", s.name, s.v)
		}
	}
	if *nodes <= 0 || *replicas <= 0 || *scaleTo < 0 || *scaleTo >= *replicas {
		return fmt.Errorf("-nodes (%d) and -replicas (%d) must be positive and -scale-to (%d) between 0 and fewer than -replicas", *nodes, *replicas, *scaleTo)
	}
	if *evict < 0 || *evict > *scaleTo {
		return fmt.Errorf("-force-delete: %d is not between 0 and -scale-to (%d)", *evict, *scaleTo)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{{"-sample", *period, time.Millisecond}, {"-phase-timeout", *timeout, time.Second}, {"-delete-delay", *delay, 0}} {
		if d.v < d.min {
			return fmt.Errorf("%s: %v must be at least %v", d.name, d.v, d.min)
		}
	}
	if *qps <= 0 {
		// kube-controller-manager reads 0 as "its default" (20), which the report would print as 0.
		return fmt.Errorf("-controller-qps: %d must be positive", *qps)
	}
	if *settle <= e2e.HoldsGoneWithin {
		return fmt.Errorf("-settle: %v must be longer than the %v the holds have to be gone in", *settle, e2e.HoldsGoneWithin)
	}
	if *schedBin == "" {
		*schedBin = filepath.Join(*assets, "kube-scheduler")
	}
	if *kcmBin == "" {
		*kcmBin = filepath.Join(*assets, "kube-controller-manager")
	}
	if err := e2e.NeedBinaries([2]string{*schedBin, "kube-scheduler"}, [2]string{*kcmBin, "kube-controller-manager"}, [2]string{*mcBin, "build"}); err != nil {
		return err
	}
	ctx, stop, err := e2e.StartCommand("bench-holds", dir)
	if err != nil {
		return err
	}
	defer stop()
	res, err := e2e.RunHolds(ctx, e2e.HoldsConfig{
		Assets: *assets, RepoRoot: *repo, Dir: *dir,
		Multicache: *mcBin, MulticacheArgs: append([]string{"--verify-period=" + verify.String()}, strings.Fields(*mcArgs)...), Scheduler: *schedBin, ControllerManager: *kcmBin,
		Nodes: *nodes, Replicas: *replicas, ScaleTo: *scaleTo, Evict: *evict, MaxSurge: *surge, MaxUnavailable: *unavail,
		PodCPU: *cpu, PodMemory: *mem, SamplePeriod: *period, DeleteDelay: *delay, Settle: *settle,
		PhaseTimeout: *timeout, ControllerQPS: *qps, Log: e2e.NewElapsedWriter(os.Stderr),
	})
	if res == nil {
		return err
	}
	var b strings.Builder
	e2e.WriteHoldsReport(&b, res, machine)
	if err := e2e.EmitReport("bench-holds", b.String(), err, *out); err != nil {
		return err
	}
	if problems := res.Problems(); *failOnBad && len(problems) > 0 {
		return fmt.Errorf("checks: %s", strings.Join(problems, "; "))
	}
	return nil
}
