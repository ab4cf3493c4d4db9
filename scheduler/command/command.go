// Package command is the multicache scheduler's command line: kube-scheduler's, every flag
// included, with the multicache plugin registered, enabled in the default profile when no
// --config is given, and told when this replica leads.
package command

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/seed0f91f25e/multicache/scheduler/plugin"
)

// New returns the multicache scheduler's command, run until SIGTERM or SIGINT. It is
// kube-scheduler's (app.NewSchedulerCommand): the same flags, help and behaviour, plus
// the multicache plugin registered under plugin.Name and, without --config, enabled in
// the default profile (DefaultConfig). extra registers more out-of-tree plugins.
func New(extra ...app.Option) *cobra.Command { return newCommand(signalContext, extra) }

// NewWithContext is New run until ctx is done instead of until a signal: tests run the
// scheduler in process.
func NewWithContext(ctx context.Context, extra ...app.Option) *cobra.Command {
	return newCommand(func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }, extra)
}

// signalContext is done on SIGTERM or SIGINT (once per process, as kube-scheduler's).
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := server.SetupSignalHandler()
	go func() {
		<-stop
		cancel()
	}()
	return ctx, cancel
}

func newCommand(runContext func() (context.Context, context.CancelFunc), extra []app.Option) *cobra.Command {
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use: "multicache-scheduler",
		Long: `The multicache scheduler is kube-scheduler with the multicache plugin: pods see the room
that Reservations and deleted pods' holds keep, prefer the node where their place is kept,
are assumed into multicache's cache as they are placed, and pod groups bind all or none.
Every kube-scheduler flag works; without --config the default profile enables the plugin.`,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return opts.ComponentGlobalsRegistry.Set()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := runContext()
			defer cancel()
			return run(ctx, cmd, opts, extra)
		},
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if len(arg) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	nfs := opts.Flags
	verflag.AddFlags(nfs.FlagSet("global"))
	globalflag.AddGlobalFlags(nfs.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	fs := cmd.Flags()
	for _, f := range nfs.FlagSets {
		fs.AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, *nfs, cols)
	if err := cmd.MarkFlagFilename("config", "yaml", "yml", "json"); err != nil {
		klog.Background().Error(err, "Failed to mark flag filename")
	}
	return cmd
}

// run is kube-scheduler's runCommand with two additions: without --config, the default
// configuration with the plugin enabled (DefaultConfig) is written to a temporary file and
// used; and the leader-election lock is watched, so that the plugin's cache starts its
// leader-only work when this replica leads.
func run(ctx context.Context, cmd *cobra.Command, opts *options.Options, extra []app.Option) error {
	verflag.PrintAndExitIfRequested()
	fg := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, fg); err != nil {
		return err
	}
	cliflag.PrintFlags(cmd.Flags())
	if opts.InformerName == nil {
		name, err := cache.NewInformerName("kube-scheduler")
		if err != nil {
			return err
		}
		opts.InformerName = name
	}
	if opts.ConfigFile == "" {
		path, cleanup, err := writeDefaultConfig(opts)
		if err != nil {
			return err
		}
		defer cleanup()
		opts.ConfigFile = path
		klog.FromContext(ctx).Info("No --config: the default profile enables the multicache plugin", "plugin", plugin.Name)
	}

	leading := newLeaderSignal()
	registry := append([]app.Option{app.WithPlugin(plugin.Name, plugin.NewFactory(leading.C()))}, extra...)
	cc, sched, err := app.Setup(ctx, opts, registry...)
	if err != nil {
		return err
	}
	if mfg, ok := fg.(featuregate.MutableFeatureGate); ok {
		mfg.AddMetrics()
	}
	opts.ComponentGlobalsRegistry.AddMetrics()
	if cc.LeaderElection == nil {
		leading.Lead()
	} else {
		cc.LeaderElection.Lock = leading.Watch(cc.LeaderElection.Lock)
	}
	return app.Run(ctx, cc, sched)
}

// Compile-time check: the watched lock is still a lock.
var _ resourcelock.Interface = &watchedLock{}
