// Command chaos-operator is the multicache operator as the chaos suite runs it: the real
// wiring (operator.New with the flags of main.go), plus what only a test needs:
//
//   - leader-election timings as flags (main.go keeps controller-runtime's 15s/10s/2s; the
//     Options have the fields but main.go binds no flag to them);
//   - a write log: every request that changes something (method, path, code, the resulting
//     resourceVersion, and for a Lease its holder), one JSON line each, so that the suite
//     knows who wrote what and when;
//   - with --chaos-scheduler-name, a simulated scheduler inside the process that assumes
//     pods into the cache (Cache.AssumePod, FinishBinding), binds them through the binding
//     subresource (sometimes after --pod-assumed-ttl has passed) or forgets them.
//
// Nothing here changes the operator's behaviour: the scheduler is a sibling controller like
// any other (started through CatchUp.AfterCatchUp), the write log only observes.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

func main() { os.Exit(run()) }

func run() int {
	// The same flags as main.go (without --local): the options' own flags and zap's.
	opts := operator.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	// The flags main.go does not have.
	replica := flag.String("chaos-replica", "chaos", "Name of this replica in the write log and the user agent.")
	writeLog := flag.String("chaos-write-log", "", "File the write log is appended to (empty: none).")
	var sched schedulerOptions
	sched.bindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	// client-go's own log lines (a reflector's "Failed to watch", errors without a context)
	// go through the same logger, structured, instead of plain text on stderr.
	klog.SetLoggerWithOptions(ctrl.Log.WithName("client-go"), klog.ContextualLogger(true))
	log := ctrl.Log.WithName("setup")

	if err := opts.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "invalid flags: %v\n", err)
		return 2
	}
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "no cluster configured")
		return 1
	}
	cfg.UserAgent = "chaos-operator-" + *replica
	if *writeLog != "" {
		wl, err := writelog.Open(*writeLog, *replica)
		if err != nil {
			log.Error(err, "opening the write log")
			return 1
		}
		defer wl.Close()
		cfg.Wrap(wl.Wrap)
	}

	op, err := operator.New(cfg, opts)
	if err != nil {
		log.Error(err, "setting up the operator")
		return 1
	}
	if sched.name != "" {
		s, err := newScheduler(op, cfg, sched, ctrl.Log.WithName("chaos-scheduler"))
		if err != nil {
			log.Error(err, "setting up the simulated scheduler")
			return 1
		}
		// Every replica that has it runs it, leader or not: it only needs a caught-up cache.
		if err := op.Manager.Add(op.CatchUp.AfterCatchUp(false, s.Start)); err != nil {
			log.Error(err, "adding the simulated scheduler")
			return 1
		}
	}
	log.Info("starting multicache (chaos build)", "replica", *replica, "scheduler", sched.name)
	if err := op.Start(ctx); err != nil {
		log.Error(err, "operator stopped with an error")
		return 1
	}
	log.Info("multicache stopped")
	return 0
}
