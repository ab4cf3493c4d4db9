package command

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	"github.com/seed0f91f25e/multicache/scheduler/plugin"
)

// TestManifest_TheDeploymentsConfigurationLoadsAndEnablesThePlugin: the configuration
// config/scheduler ships loads and validates as kube-scheduler loads --config, and its
// plugin args decode.
func TestManifest_TheDeploymentsConfigurationLoadsAndEnablesThePlugin(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "scheduler", "scheduler.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(firstDocument(data), &cm); err != nil || cm.Kind != "ConfigMap" {
		t.Fatalf("the first document of scheduler.yaml is not the ConfigMap (%v)", err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("the shipped configuration does not validate: %v", err)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "multicache-scheduler" {
		t.Fatalf("profiles %+v, want multicache-scheduler", cfg.Profiles)
	}
	found := false
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		found = found || p.Name == "Multicache"
	}
	if !found {
		t.Error("the profile does not enable the plugin")
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == "Multicache" {
			if _, err := plugin.DecodeArgs(pc.Args); err != nil {
				t.Errorf("the plugin's args: %v", err)
			}
			return
		}
	}
	t.Error("no pluginConfig for the plugin")
}

// firstDocument returns a YAML stream's first document.
func firstDocument(data []byte) []byte {
	for i := 0; i+4 <= len(data); i++ {
		if string(data[i:i+4]) == "\n---" {
			return data[:i+1]
		}
	}
	return data
}
