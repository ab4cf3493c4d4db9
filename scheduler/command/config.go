package command

import (
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/seed0f91f25e/multicache/scheduler/plugin"
)

// DefaultWeight is the plugin's score weight in the default profile: a node where the pod's
// place is kept outweighs the spreading and packing preferences of the default plugins
// (each of weight 1 or 2, up to 100 points each).
const DefaultWeight = 10

// DefaultConfig is the configuration the command runs without --config: kube-scheduler's
// defaults (one profile, default-scheduler) with the multicache plugin enabled at every
// extension point it implements (multiPoint: PreFilter, Filter, PreScore, Score, Reserve,
// Permit, PostBind) with DefaultWeight and its default args, and the client connection and
// profiling settings of the deprecated flags (--kubeconfig, --kube-api-qps, ...), which
// kube-scheduler otherwise ignores once a configuration file is given.
func DefaultConfig(opts *options.Options) (*configv1.KubeSchedulerConfiguration, error) {
	internal, err := latest.Default()
	if err != nil {
		return nil, err
	}
	opts.ComponentConfig = internal
	opts.ApplyDeprecated()
	cc := internal.ClientConnection
	return &configv1.KubeSchedulerConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: configv1.SchemeGroupVersion.String(), Kind: "KubeSchedulerConfiguration"},
		ClientConnection: componentbaseconfigv1alpha1.ClientConnectionConfiguration{
			Kubeconfig: cc.Kubeconfig, AcceptContentTypes: cc.AcceptContentTypes, ContentType: cc.ContentType, QPS: cc.QPS, Burst: cc.Burst,
		},
		DebuggingConfiguration: componentbaseconfigv1alpha1.DebuggingConfiguration{
			EnableProfiling: ptr.To(internal.EnableProfiling), EnableContentionProfiling: ptr.To(internal.EnableContentionProfiling),
		},
		Profiles: []configv1.KubeSchedulerProfile{{
			SchedulerName: ptr.To(internal.Profiles[0].SchedulerName),
			Plugins: &configv1.Plugins{MultiPoint: configv1.PluginSet{
				Enabled: []configv1.Plugin{{Name: plugin.Name, Weight: ptr.To[int32](DefaultWeight)}},
			}},
		}},
	}, nil
}

// writeDefaultConfig writes DefaultConfig to a temporary file, removed by cleanup.
func writeDefaultConfig(opts *options.Options) (path string, cleanup func(), err error) {
	cfg, err := DefaultConfig(opts)
	if err != nil {
		return "", nil, fmt.Errorf("building the default configuration: %w", err)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("encoding the default configuration: %w", err)
	}
	f, err := os.CreateTemp("", "multicache-scheduler-*.yaml")
	if err != nil {
		return "", nil, fmt.Errorf("writing the default configuration: %w", err)
	}
	cleanup = func() { _ = os.Remove(f.Name()) }
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		cleanup()
		return "", nil, fmt.Errorf("writing the default configuration: %w", err)
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("writing the default configuration: %w", err)
	}
	return f.Name(), cleanup, nil
}
