package controllers

import (
	"strings"
	"testing"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func TestPodGroupFromNative_ABasicPolicyIsAGangOfOne(t *testing.T) {
	pg := ts.MakeNativePodGroup("ns", "gang", 1)
	pg.Spec.SchedulingPolicy = schedulingv1alpha3.PodGroupSchedulingPolicy{Basic: &schedulingv1alpha3.BasicSchedulingPolicy{}}
	if got := PodGroupFromNative(pg).Spec.MinMember; got != 1 {
		t.Errorf("basic policy: minMember %d, want 1", got)
	}
}

func TestPodGroupFromSchedulerPlugins_FieldsOfTheWrongTypeAreErrorsNamingThem(t *testing.T) {
	for field, mutate := range map[string]func(u map[string]any){
		"spec.minMember":              func(u map[string]any) { u["spec"].(map[string]any)["minMember"] = "three" },
		"spec.scheduleTimeoutSeconds": func(u map[string]any) { u["spec"].(map[string]any)["scheduleTimeoutSeconds"] = "soon" },
		"status.scheduleStartTime":    func(u map[string]any) { u["status"] = map[string]any{"scheduleStartTime": "yesterday"} },
	} {
		u := ts.MakeSchedulerPluginsPodGroup("ns", "gang", 2)
		mutate(u.Object)
		_, err := PodGroupFromSchedulerPlugins(u)
		if err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "ns/gang") {
			t.Errorf("%s of the wrong type: error %v, want one naming the field and the group", field, err)
		}
	}
}
