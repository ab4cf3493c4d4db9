package command

import (
	"os"
	"slices"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	config "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"

	"github.com/seed0f91f25e/multicache/scheduler/plugin"
)

// TestDefaultConfig_EnablesThePluginAndKeepsTheDeprecatedFlags: the file written without
// --config loads as kube-scheduler loads a --config, validates, keeps every default plugin,
// enables the multicache plugin with its weight, and carries --kubeconfig and
// --kube-api-qps, which a configuration file would otherwise silence.
func TestDefaultConfig_EnablesThePluginAndKeepsTheDeprecatedFlags(t *testing.T) {
	opts := options.NewOptions()
	if err := opts.Flags.FlagSet("deprecated").Parse([]string{"--kubeconfig=/etc/k/config", "--kube-api-qps=77"}); err != nil {
		t.Fatal(err)
	}
	path, cleanup, err := writeDefaultConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("the default configuration does not validate: %v", err)
	}
	if cfg.ClientConnection.Kubeconfig != "/etc/k/config" || cfg.ClientConnection.QPS != 77 {
		t.Errorf("client connection %+v: the deprecated flags are lost", cfg.ClientConnection)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "default-scheduler" {
		t.Fatalf("profiles %+v, want default-scheduler only", cfg.Profiles)
	}
	mp := cfg.Profiles[0].Plugins.MultiPoint.Enabled
	i := slices.IndexFunc(mp, func(p config.Plugin) bool { return p.Name == plugin.Name })
	if i < 0 || mp[i].Weight != DefaultWeight {
		t.Errorf("multiPoint %+v: the plugin is not enabled with weight %d", mp, DefaultWeight)
	}
	if !slices.ContainsFunc(mp, func(p config.Plugin) bool { return p.Name == "NodeResourcesFit" }) {
		t.Errorf("multiPoint %+v: the default plugins are gone", mp)
	}
	cleanup()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s", path)
	}
}
