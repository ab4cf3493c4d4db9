package operator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// podWithRuntimeFields is a pod with what placement reads and what only the kubelet reads.
func podWithRuntimeFields(ns string) *corev1.Pod {
	p := ts.MakePod(ns, "runtime-fields", ts.OnNode("n1"), ts.Requests("250m", "64Mi"), ts.WithLabels("app", "a"))
	c := &p.Spec.Containers[0]
	c.Image, c.Command, c.Args = "registry.example.com/app:v1", []string{"/app"}, []string{"--serve"}
	c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 18080}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	p.Spec.NodeSelector = map[string]string{"zone": "a"}
	p.Spec.Hostname = "web-0"
	return p
}

// Through the real API server: the cache's pods (listed, and watched after an update)
// come without the runtime fields and with everything placement reads; the API reader
// reads them whole; with --whole-pods the cache holds the pod whole but for managedFields.
func TestPodFields_TheCachesPodsLeaveOutOnlyTheRuntimeFields(t *testing.T) {
	ns := newNamespace(t)
	created := podWithRuntimeFields(ns)
	if err := env.Client.Create(ctx(), created); err != nil {
		t.Fatal(err)
	}
	// What a kubelet reports of the running pod.
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, Reason: "Started", Message: "all good",
		HostIP: "10.0.0.7", HostIPs: []corev1.HostIP{{IP: "10.0.0.7"}}, PodIP: "10.244.0.9", PodIPs: []corev1.PodIP{{IP: "10.244.0.9"}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true, RestartCount: 2, Image: "registry.example.com/app:v1",
			ImageID: "registry.example.com/app@sha256:0123", ContainerID: "containerd://abc",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}
	if err := env.Client.Status().Update(ctx(), created); err != nil {
		t.Fatal(err)
	}
	hc, err := cacheHTTPClient(env.Config, false)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := startCacheWith(t, Options{}, hc, ns)
	wholeHC, err := cacheHTTPClient(env.Config, true)
	if err != nil {
		t.Fatal(err)
	}
	whole := startCacheWith(t, Options{WholePods: true}, wholeHC, ns)

	api := &corev1.Pod{}
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(created), api); err != nil {
		t.Fatal(err)
	}
	if c := api.Spec.Containers[0]; c.Image == "" || len(c.Env) == 0 || c.ReadinessProbe == nil || api.Spec.Hostname == "" {
		t.Fatalf("the API reader's pod lacks its runtime fields: %+v", api.Spec)
	}
	got := &corev1.Pod{}
	if err := trimmed.Get(ctx(), client.ObjectKeyFromObject(created), got); err != nil {
		t.Fatal(err)
	}
	want := api.DeepCopy()
	want.ManagedFields = nil
	clearRuntimeFields(want)
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Fatalf("the cache's pod is not the API's without its runtime fields (-want +got):\n%s", diff.Diff(want, got))
	}
	if c := got.Spec.Containers[0]; c.Image != "" || len(c.Env) > 0 || c.ReadinessProbe != nil || got.Spec.Hostname != "" ||
		c.Ports[0].HostPort != 18080 || c.Resources.Requests.Cpu().String() != "250m" ||
		got.Spec.Tolerations[0].Key != "dedicated" || got.Spec.NodeSelector["zone"] != "a" || got.Spec.NodeName != "n1" {
		t.Fatalf("the cache's pod: %+v", got.Spec)
	}
	if st := got.Status; st.HostIP != "" || st.PodIP != "" || len(st.PodIPs) > 0 || st.Message != "" || st.Reason != "Started" ||
		st.ContainerStatuses[0].Image != "" || st.ContainerStatuses[0].ContainerID != "" || !st.ContainerStatuses[0].Ready ||
		st.ContainerStatuses[0].RestartCount != 2 || st.ContainerStatuses[0].State.Waiting == nil {
		t.Fatalf("the cache's pod status: %+v", st)
	}
	// A watched update arrives trimmed too.
	api.Labels["app"] = "b"
	if err := env.Client.Update(ctx(), api); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache sees the update", func() (bool, string) {
		err := trimmed.Get(ctx(), client.ObjectKeyFromObject(created), got)
		return err == nil && got.Labels["app"] == "b", fmt.Sprint(err, got.Labels)
	})
	if c := got.Spec.Containers[0]; c.Image != "" || len(c.Env) > 0 || c.Ports[0].HostPort != 18080 {
		t.Fatalf("the cache's watched pod: %+v", got.Spec)
	}
	wholePod := &corev1.Pod{}
	eventually(t, "the whole cache sees the update", func() (bool, string) {
		err := whole.Get(ctx(), client.ObjectKeyFromObject(created), wholePod)
		return err == nil && wholePod.Labels["app"] == "b", fmt.Sprint(err, wholePod.Labels)
	})
	want = api.DeepCopy()
	want.ManagedFields = nil
	if !apiequality.Semantic.DeepEqual(wholePod, want) {
		t.Fatalf("with --whole-pods the cache's pod is not the API's (-want +got):\n%s", diff.Diff(want, wholePod))
	}
}
