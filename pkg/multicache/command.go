package multicache

import (
	"errors"
	"flag"
	"fmt"
	"github.com/go-logr/logr"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	crconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/memlimit"
	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/internal/version"
)

// Command is multicache's command line: flags to Options, the operator with the built-in
// stores and those registered with WithStore, the siblings registered with WithSibling.
// multicache's own main.go is NewCommand().Run(os.Args[1:]).
type Command struct {
	name     string
	stores   []handler.Registration
	siblings []SiblingFactory
	// settings are the siblings' own settings (WithSiblingSettings), bound to the flags.
	settings []SiblingSettings
}

// NewCommand returns the command of a multicache with the built-in stores plus the given
// options' stores and siblings.
func NewCommand(opts ...Option) *Command {
	c := &Command{name: filepath.Base(os.Args[0])}
	for _, o := range opts {
		o(c)
	}
	return c
}

// flags is what one parse of the command line fills.
type flags struct {
	opts        operator.Options
	local       localOptions
	showVersion bool
	zap         zap.Options
	// steadyGOGC is the GC percent once the cache caught up (memlimit.Steady).
	steadyGOGC int
}

// Exit codes of Run.
const (
	exitOK       = 0
	exitFailed   = 1
	exitBadFlags = 2
)

// Run parses args (without the program name) and runs multicache until SIGTERM or SIGINT.
// It returns the process exit code: 0 after a clean stop (or -h, --version), 1 when the
// operator failed, 2 for bad flags or a bad registration (the message names what to fix).
func (c *Command) Run(args []string) int {
	f, err := c.parse(args)
	var help helpRequested
	var bad badFlags
	switch {
	case errors.As(err, &help):
		help.print(os.Stdout)
		return exitOK
	case errors.As(err, &bad):
		// The error alone, last, with where to look: the usage would scroll it away.
		fmt.Fprintf(os.Stderr, "%s: %v\nRun '%s --help' for usage.\n", c.name, err, c.name)
		return exitBadFlags
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return exitBadFlags
	}
	if f.showVersion {
		fmt.Println(version.String())
		return exitOK
	}
	var cfg *rest.Config
	if !f.local.enabled {
		// Resolved before the logger is set: controller-runtime logs a failed in-cluster
		// attempt as an error with a stack trace, ahead of the one line that says what to do.
		if cfg, err = ctrl.GetConfig(); err != nil {
			fmt.Fprintln(os.Stderr, noClusterMessage(c.name, err))
			return exitFailed
		}
	}
	logger := zap.New(zap.UseFlagOptions(&f.zap))
	if f.local.enabled {
		// The banner is the last thing a local start prints.
		logger = logr.New(quietStartup{logger.GetSink()})
	}
	ctrl.SetLogger(logger)
	// client-go's own log lines (a reflector's "Failed to watch", errors without a context)
	// go through the same logger, structured, instead of plain text on stderr.
	klog.SetLoggerWithOptions(ctrl.Log.WithName("client-go"), klog.ContextualLogger(true))
	log := ctrl.Log.WithName("setup")
	// A cache sized to its container must not be OOM-killed before the collector tries. A
	// bad value is logged and the operator runs without a soft limit, as it would without
	// the variable.
	if limit, err := memlimit.Set(); err != nil {
		log.Error(err, "not setting a Go memory limit from the container's")
	} else if limit > 0 {
		log.Info("Go memory limit set from the container's", "bytes", limit, "fraction", memlimit.Fraction)
	}
	ctx := ctrl.SetupSignalHandler()

	var state localState
	if f.local.enabled {
		cp, st, err := startLocal(ctx, f.local, []listenFlag{
			{"--metrics-bind-address", f.opts.MetricsBindAddress},
			{"--health-probe-bind-address", f.opts.HealthProbeBindAddress},
			{"--debug-bind-address", f.opts.DebugBindAddress},
		})
		if err != nil {
			// A setup error for a person (another run, a port in use, no binaries): one line.
			fmt.Fprintf(os.Stderr, "%s: starting the local control plane: %v\n", c.name, err)
			return exitFailed
		}
		defer func() {
			st.components.stop()
			if err := cp.Stop(); err != nil {
				log.Error(err, "stopping the local control plane")
			}
			_ = st.lock.Release()
		}()
		cfg, state = rest.CopyConfig(cp.Config), st
		state.metricsAddr, state.metricsSecure = f.opts.MetricsBindAddress, f.opts.MetricsSecure
	}
	cfg.UserAgent = version.UserAgent()

	if shardFillsSteady(f.opts, f.steadyGOGC) {
		log.Info("sub-cluster replica: collector set for the steady state from the start", "gcPercent", f.steadyGOGC)
	}
	op, err := operator.New(cfg, f.opts)
	if err != nil {
		log.Error(err, "setting up the operator")
		return exitFailed
	}
	go func() {
		select {
		case <-op.CatchUp.Done():
			if memlimit.Steady(f.steadyGOGC) {
				log.Info("cache caught up: collector set for the steady state", "gcPercent", f.steadyGOGC)
			}
			if f.local.enabled {
				fmt.Print(banner(state, f.opts.DebugBindAddress))
			}
		case <-ctx.Done():
		}
	}()
	log.Info("starting multicache", "version", version.Get(), "stores", op.Cache.StoreNames())
	if err := op.Start(ctx); err != nil {
		log.Error(err, "operator stopped with an error")
		return exitFailed
	}
	log.Info("multicache stopped")
	return exitOK
}

// Options parses args as Run does and returns the operator's options, with the registered
// stores and siblings: build the operator with New(cfg, opts) to run exactly what the
// binary runs (tests, programs that embed multicache). --local, --version and the logging
// flags are the binary's only.
func (c *Command) Options(args []string) (Options, error) {
	f, err := c.parse(args)
	if err != nil {
		return Options{}, err
	}
	return Options{o: f.opts, steadyGOGC: f.steadyGOGC}, nil
}

// parse builds the flag set, parses args and validates the options and the registrations.
func (c *Command) parse(args []string) (*flags, error) {
	reg, err := handler.BuiltIn().With(c.stores...)
	if err != nil {
		return nil, fmt.Errorf("registering stores: %w", err)
	}
	for i, s := range c.siblings {
		if s == nil {
			return nil, fmt.Errorf("registering siblings: sibling %d has no factory", i)
		}
	}
	f := &flags{opts: operator.DefaultOptions(), local: localOptions{dir: ".local"}}
	f.opts.Registry = reg
	f.opts.Stores = storeNames(reg)
	for _, s := range c.siblings {
		f.opts.Siblings = append(f.opts.Siblings, siblingFactory(s))
	}

	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	// The flag set prints nothing: Run prints an error alone with a hint, the usage on -h.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	f.opts.BindFlags(fs)
	f.local.bindFlags(fs)
	fs.BoolVar(&f.showVersion, "version", false, "Print the version and exit.")
	fs.IntVar(&f.steadyGOGC, "steady-gogc", memlimit.DefaultSteadyGCPercent,
		"The Go GC percent once the cache caught up (the cold start runs at GOGC, default 100, to fill fast; a sub-cluster replica runs at it from the start); 0 keeps GOGC. Ignored when GOGC is set.")
	f.zap.BindFlags(fs)
	crconfig.RegisterFlags(fs) // --kubeconfig, read by ctrl.GetConfig
	if err := bindSiblingFlags(fs, c.settings); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, helpRequested{fs}
		}
		return nil, badFlags{fmt.Errorf("invalid flags: %w", err)}
	}
	if fs.NArg() > 0 {
		return nil, badFlags{fmt.Errorf("invalid flags: unexpected arguments %q: every option is a flag", fs.Args())}
	}
	if err := f.opts.Validate(); err != nil {
		return nil, badFlags{fmt.Errorf("invalid flags: %w", err)}
	}
	if f.steadyGOGC < 0 {
		return nil, badFlags{fmt.Errorf("invalid flags: --steady-gogc=%d: must not be negative (0 keeps GOGC)", f.steadyGOGC)}
	}
	if err := validateSiblingSettings(c.settings); err != nil {
		return nil, badFlags{fmt.Errorf("invalid flags: %w", err)}
	}
	return f, nil
}

// badFlags is a command line that cannot run: Run prints it with a hint to --help.
type badFlags struct{ error }

func (e badFlags) Unwrap() error { return e.error }

// helpRequested is -h or --help: Run prints the usage.
type helpRequested struct{ fs *flag.FlagSet }

func (helpRequested) Error() string { return flag.ErrHelp.Error() }
func (helpRequested) Unwrap() error { return flag.ErrHelp }
func (h helpRequested) print(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [flags]\n\nFlags:\n", h.fs.Name())
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

// noClusterMessage is the line Run prints when no cluster configuration loads.
func noClusterMessage(name string, err error) string {
	if clientcmd.IsEmptyConfig(err) {
		return name + ": no cluster configured: pass --kubeconfig, set KUBECONFIG, or use --local (`make run` does when no cluster is configured)"
	}
	return fmt.Sprintf("%s: cannot load the cluster configuration: %v (pass --kubeconfig, set KUBECONFIG, or use --local)", name, err)
}

func storeNames(reg handler.Registry) []string { return names(reg.Names()) }

// shardFillsSteady sets a sub-cluster replica's collector to the steady GC percent from the
// start rather than once caught up (unless GOGC is set or percent is 0, as memlimit.Steady),
// and reports whether it did. A shard's fill is its share of the cluster and waits on its
// nodes' lists more than on the collector, while the heap a fill at GOGC=100 grows to is
// what its RSS stays at (BENCHMARKS.md "Shards").
func shardFillsSteady(opts operator.Options, percent int) bool {
	return opts.SubClusterKey != "" && memlimit.Steady(percent)
}
