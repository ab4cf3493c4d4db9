package install

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/internal/memlimit"
)

// memoryLimitEnv checks that c hands its memory limit to the operator through the Downward
// API in bytes (what memlimit.Set reads) and sets no GOMEMLIMIT (which would switch that
// off), and returns the container's memory limit.
func memoryLimitEnv(t *testing.T, from string, c corev1.Container) resource.Quantity {
	t.Helper()
	var found bool
	for _, e := range c.Env {
		switch e.Name {
		case "GOMEMLIMIT":
			t.Errorf("%s: the container sets GOMEMLIMIT=%q, which overrides %s", from, e.Value, memlimit.LimitEnv)
		case memlimit.LimitEnv:
			found = true
			ref := (*corev1.ResourceFieldSelector)(nil)
			if e.ValueFrom != nil {
				ref = e.ValueFrom.ResourceFieldRef
			}
			if ref == nil || ref.Resource != "limits.memory" || (ref.ContainerName != "" && ref.ContainerName != c.Name) ||
				ref.Divisor.Cmp(resource.MustParse("1")) != 0 {
				t.Errorf("%s: %s = %+v, want the Downward API's limits.memory of this container with divisor 1 (bytes)", from, e.Name, e.ValueFrom)
			}
		}
	}
	if !found {
		t.Errorf("%s: the container has no %s: the operator would run without a Go memory limit", from, memlimit.LimitEnv)
	}
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Errorf("%s: the container has no memory limit: the Downward API would give the node's allocatable memory", from)
	}
	return limit
}

// TestInstaller_DeploymentHandsTheMemoryLimitToTheOperator checks install.yaml (which the
// API server accepted) and the chart rendered with another limit: both give the operator
// the container's memory limit through the Downward API.
func TestInstaller_DeploymentHandsTheMemoryLimitToTheOperator(t *testing.T) {
	var dep appsv1.Deployment
	typed(t, installed(t), "Deployment", &dep)
	memoryLimitEnv(t, "install.yaml", dep.Spec.Template.Spec.Containers[0])

	objs, stderr, err := helmTemplate(t, "ns", "--set-string", "resources.limits.memory=4Gi")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	var fromChart appsv1.Deployment
	typed(t, objs, "Deployment", &fromChart)
	if limit := memoryLimitEnv(t, "the chart", fromChart.Spec.Template.Spec.Containers[0]); limit.Cmp(resource.MustParse("4Gi")) != 0 {
		t.Errorf("the chart: memory limit %v, want the value 4Gi", &limit)
	}
}
