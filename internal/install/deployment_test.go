package install

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// typed finds the one object of kind in objs and converts it into out.
func typed(t *testing.T, objs []*unstructured.Unstructured, kind string, out any) {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			return
		}
	}
	t.Fatalf("install.yaml has no %s", kind)
}

// TestInstaller_DeploymentSurvivesDisruptionsAndAdmitsOnlyScrapers checks the shape of
// what runs: the image, two replicas spread over nodes, a disruption budget that keeps one,
// and a network policy that lets only namespaces labelled metrics=enabled reach the metrics
// port; logs stay JSON and HTTP/2 stays off in the cluster.
func TestInstaller_DeploymentSurvivesDisruptionsAndAdmitsOnlyScrapers(t *testing.T) {
	objs := installed(t)
	var dep appsv1.Deployment
	var pdb policyv1.PodDisruptionBudget
	var np networkingv1.NetworkPolicy
	typed(t, objs, "Deployment", &dep)
	typed(t, objs, "PodDisruptionBudget", &pdb)
	typed(t, objs, "NetworkPolicy", &np)
	podLabels := labels.Set(dep.Spec.Template.Labels)

	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != testImage {
		t.Errorf("image = %q, want IMG %q", c.Image, testImage)
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", dep.Spec.Replicas)
	}
	for _, arg := range c.Args {
		if arg == "--enable-http2=true" || arg == "--enable-http2" || slices.Contains([]string{"--zap-devel", "--zap-encoder=console"}, arg) {
			t.Errorf("the Deployment passes %s; the cluster keeps HTTP/2 off and logs JSON", arg)
		}
	}

	spread := dep.Spec.Template.Spec.TopologySpreadConstraints
	if len(spread) != 1 || spread[0].TopologyKey != corev1.LabelHostname ||
		spread[0].WhenUnsatisfiable != corev1.ScheduleAnyway || spread[0].MaxSkew != 1 {
		t.Errorf("topology spread = %+v, want maxSkew 1 over %s, ScheduleAnyway", spread, corev1.LabelHostname)
	} else if !selects(t, spread[0].LabelSelector, podLabels) {
		t.Errorf("the topology spread selector %v does not select the pods %v", spread[0].LabelSelector, podLabels)
	}

	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget = %+v, want maxUnavailable 1", pdb.Spec)
	}
	if !selects(t, pdb.Spec.Selector, podLabels) {
		t.Errorf("the PodDisruptionBudget selector %v does not select the pods %v", pdb.Spec.Selector, podLabels)
	}

	if !selects(t, &np.Spec.PodSelector, podLabels) {
		t.Errorf("the NetworkPolicy selects %v, not the pods %v", np.Spec.PodSelector, podLabels)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) != 1 {
		t.Fatalf("NetworkPolicy = %+v, want one Ingress rule", np.Spec)
	}
	rule := np.Spec.Ingress[0]
	if len(rule.From) != 1 || rule.From[0].NamespaceSelector == nil || rule.From[0].PodSelector != nil ||
		!selects(t, rule.From[0].NamespaceSelector, labels.Set{"metrics": "enabled"}) ||
		selects(t, rule.From[0].NamespaceSelector, labels.Set{}) {
		t.Errorf("NetworkPolicy admits %+v, want exactly the namespaces labelled metrics=enabled", rule.From)
	}
	metricsPort := int32(0)
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			metricsPort = p.ContainerPort
		}
	}
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.IntValue() != int(metricsPort) || metricsPort == 0 {
		t.Errorf("NetworkPolicy ports = %+v, want only the metrics port %d", rule.Ports, metricsPort)
	}
}

func selects(t *testing.T, sel *metav1.LabelSelector, set labels.Set) bool {
	t.Helper()
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(set)
}
