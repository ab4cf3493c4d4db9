package operator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/wiretrim"
	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// BenchmarkWireTrim_Watch decodes a recorded protobuf watch stream (30,000 pods; 3,000
// ReplicaSets) through client-go's watch decoder and the cache's transform, whole, with
// managedFields skipped (pods as --whole-pods has them) and trimmed as the cache does: one
// op is the whole stream.
//
//	go test ./internal/operator/ -run '^$' -bench BenchmarkWireTrim_Watch -benchmem -benchtime 3x -count 5
func BenchmarkWireTrim_Watch(b *testing.B) {
	for _, c := range []struct {
		kind string
		n    int
		obj  func(i int) runtime.Object
	}{
		{"Pod", 30000, func(i int) runtime.Object { return benchPod(i) }},
		{"ReplicaSet", 3000, func(i int) runtime.Object { return benchReplicaSet(i) }},
	} {
		events := make([]wiretrimtest.Event, c.n)
		for i := range events {
			events[i] = wiretrimtest.Event{Type: watch.Added, Object: c.obj(i)}
		}
		stream, err := wiretrimtest.Watch(events...)
		if err != nil {
			b.Fatal(err)
		}
		var k wiretrim.Kind
		for _, tk := range trimmedKinds(false) {
			if tk.Kind == c.kind {
				k = tk
			}
		}
		responder := wiretrimtest.Responder{Watch: stream}
		for _, v := range []struct {
			name string
			rt   http.RoundTripper
			opts Options
		}{
			{"whole", responder, Options{WholePods: true}},                                                  // --trim-at-decode=false --whole-pods
			{"managedFields", wiretrim.Wrapper(trimmedKinds(true)...)(responder), Options{WholePods: true}}, // --whole-pods
			{"trimmed", wiretrim.Wrapper(trimmedKinds(false)...)(responder), Options{}},                     // the defaults
		} {
			b.Run(c.kind+"/"+v.name, func(b *testing.B) {
				cpu := processCPU()
				for b.Loop() {
					if got := len(watchTransformed(b, k, v.rt, v.opts, false)); got != c.n {
						b.Fatalf("watched %d, want %d", got, c.n)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
				b.ReportMetric(float64(heldBytes(func() any { return watchTransformed(b, k, v.rt, v.opts, true) }))/float64(c.n), "heldB/obj")
				b.ReportMetric(float64(len(stream))/float64(c.n), "wireB/obj")
				b.ReportMetric(float64(decodedBytes(b, k, v.rt))/float64(c.n), "decodedB/obj")
			})
		}
	}
}

// heldBytes is the live heap that what fill returns holds, after a collection.
func heldBytes(fill func() any) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	held := fill()
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(held)
	return after.HeapAlloc - before.HeapAlloc
}

// watchTransformed watches k through rt as the cache's informers do and transforms every
// object as the cache does with opts; it returns what it watched, every object when keep, else nils.
func watchTransformed(b *testing.B, k wiretrim.Kind, rt http.RoundTripper, opts Options, keep bool) []runtime.Object {
	gv := schema.GroupVersion{Group: k.Group, Version: k.Version}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.AddSpecific(gv.WithKind(k.Kind), gv.WithResource(k.Resource), gv.WithResource(k.Resource), meta.RESTScopeRoot)
	c, err := client.NewWithWatch(&rest.Config{Host: "http://wiretrim.invalid"},
		client.Options{HTTPClient: &http.Client{Transport: rt}, Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		b.Fatal(err)
	}
	transform := cacheTransformOf(b, opts, gv.WithKind(k.Kind))
	w, err := c.Watch(context.Background(), newObject(b, gv.WithKind(k.Kind+"List")).(client.ObjectList))
	if err != nil {
		b.Fatal(err)
	}
	var objs []runtime.Object
	for e := range w.ResultChan() {
		obj, err := transform(e.Object)
		if err != nil {
			b.Fatal(err)
		}
		if keep {
			objs = append(objs, obj.(runtime.Object))
		} else {
			objs = append(objs, nil)
		}
	}
	return objs
}

// benchFieldsV1 is a managedFields entry as the API server writes it for a client's create
// of a pod like benchPod's: one entry, FieldsV1 of about 500 bytes (the ReplicaSet
// controller's is about twice that, and the kubelet adds one for the status).
const benchFieldsV1 = `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},` +
	`"f:ownerReferences":{".":{},"k:{\"uid\":\"5d0c6a4e-3c1b-4f6e-9a7b-2f1e0c9d8b7a\"}":{}}},` +
	`"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},` +
	`"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},` +
	`"f:volumeMounts":{}}},"f:restartPolicy":{},"f:volumes":{}}}`

func benchManagedFields() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", Time: ptr.To(metav1.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)), FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(benchFieldsV1)}}}
}

// benchTemplate is a realistic pod template: one or two containers with requests and
// limits, env, a port, a volume mount.
func benchTemplate(i int) corev1.PodTemplateSpec {
	app := fmt.Sprintf("app-%d", i/30)
	c := corev1.Container{
		Name: "app", Image: "registry.example.com/team/" + app + ":v1.2.3", ImagePullPolicy: corev1.PullIfNotPresent,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		VolumeMounts:             []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	containers := []corev1.Container{c}
	if i%2 == 0 {
		sidecar := c
		sidecar.Name, sidecar.Image, sidecar.Ports, sidecar.Env = "proxy", "registry.example.com/mesh/proxy:1.20", nil, nil
		containers = append(containers, sidecar)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app, "tier": "backend", "pod-template-hash": "7d4b9c8f6d"}},
		Spec: corev1.PodSpec{
			Containers: containers, RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
			TerminationGracePeriodSeconds: ptr.To[int64](30), SchedulerName: "default-scheduler", EnableServiceLinks: ptr.To(true),
			ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}, DefaultMode: ptr.To[int32](0o644)}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		},
	}
}

// benchPod is a running pod of a ReplicaSet as the API server holds it: the kubelet's
// status (conditions, IPs, container statuses with allocated resources) and the projected
// service-account volume mounted in every container.
func benchPod(i int) *corev1.Pod {
	t := benchTemplate(i)
	created := metav1.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%50), Name: fmt.Sprintf("%s-7d4b9c8f6d-%05d", t.Labels["app"], i),
			GenerateName: t.Labels["app"] + "-7d4b9c8f6d-", UID: types.UID(fmt.Sprintf("0f3e6b1a-8c2d-4e5f-9a1b-%012d", i)),
			ResourceVersion: fmt.Sprint(1000 + i), CreationTimestamp: created, Labels: t.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: t.Labels["app"] + "-7d4b9c8f6d",
				UID: "5d0c6a4e-3c1b-4f6e-9a7b-2f1e0c9d8b7a", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: benchManagedFields(),
		},
		Spec: t.Spec,
	}
	p.Spec.NodeName = fmt.Sprintf("node-%04d", i%1000)
	p.Spec.Volumes = append(p.Spec.Volumes, benchServiceAccountVolume(i))
	for j := range p.Spec.Containers {
		p.Spec.Containers[j].VolumeMounts = append(p.Spec.Containers[j].VolumeMounts,
			corev1.VolumeMount{Name: p.Spec.Volumes[1].Name, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"})
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.3.17", PodIP: "10.244.3.45", StartTime: &created,
		QOSClass: corev1.PodQOSBurstable, PodIPs: []corev1.PodIP{{IP: "10.244.3.45"}}, HostIPs: []corev1.HostIP{{IP: "10.0.3.17"}}}
	for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: ct, Status: corev1.ConditionTrue, LastTransitionTime: created})
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Ready: true, Started: ptr.To(true),
			Image: c.Image, ImageID: c.Image + "@sha256:" + strings.Repeat("ab", 32), ContainerID: "containerd://" + strings.Repeat("cd", 32),
			State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
			AllocatedResources: c.Resources.Requests, Resources: c.Resources.DeepCopy()})
	}
	return p
}

// benchServiceAccountVolume is the projected volume the ServiceAccount admission plugin
// adds to pod i.
func benchServiceAccountVolume(i int) corev1.Volume {
	return corev1.Volume{Name: fmt.Sprintf("kube-api-access-%05x", i), VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

// benchReplicaSet is a ReplicaSet of a Deployment with benchTemplate's template.
func benchReplicaSet(i int) *appsv1.ReplicaSet {
	t := benchTemplate(i * 30)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%50), Name: t.Labels["app"] + "-7d4b9c8f6d",
			UID: types.UID(fmt.Sprintf("5d0c6a4e-3c1b-4f6e-9a7b-%012d", i)), ResourceVersion: fmt.Sprint(500 + i), Generation: 1,
			Labels: t.Labels, Annotations: map[string]string{"deployment.kubernetes.io/revision": "1", "deployment.kubernetes.io/desired-replicas": "30"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: t.Labels["app"],
				UID: types.UID(fmt.Sprintf("7a1b2c3d-4e5f-6a7b-8c9d-%012d", i)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: benchManagedFields(),
		},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](30), Selector: &metav1.LabelSelector{MatchLabels: t.Labels}, Template: t},
		Status: appsv1.ReplicaSetStatus{Replicas: 30, ReadyReplicas: 30, AvailableReplicas: 30, FullyLabeledReplicas: 30, ObservedGeneration: 1},
	}
}

// processCPU is the CPU time the process used so far (user and system, every thread: the
// collector's workers too), in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// decodedBytes is the length of the watch stream the decoder reads through rt.
func decodedBytes(b *testing.B, k wiretrim.Kind, rt http.RoundTripper) int {
	path := "/apis/" + k.Group + "/" + k.Version + "/" + k.Resource
	if k.Group == "" {
		path = "/api/" + k.Version + "/" + k.Resource
	}
	req, err := http.NewRequest(http.MethodGet, "http://wiretrim.invalid"+path+"?watch=true", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return int(n)
}
