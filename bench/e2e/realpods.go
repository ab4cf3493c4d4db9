package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// The field managers of a running cluster's pods: the ReplicaSet controller creates them
// (inside kube-controller-manager), the kubelet writes their status.
const (
	ControllerFieldManager = "kube-controller-manager"
	KubeletFieldManager    = "kubelet"
)

// realisticStart is when every realistic pod was created, scheduled and started: a fixed
// time, so that pods of one index are the same bytes in every run.
var realisticStart = metav1.NewTime(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))

// CreateRealisticPod writes pod slot of ReplicaSet r as a running cluster holds it: created
// by the ReplicaSet controller's field manager (MakeRealisticPod), then its status written
// through the status subresource with the kubelet's (RealisticPodStatus).
func CreateRealisticPod(ctx context.Context, c client.Client, r, slot int, rsUID types.UID, node int) error {
	pod := MakeRealisticPod(r, slot, rsUID, NodeName(node))
	if err := harness.Create(ctx, client.WithFieldOwner(c, ControllerFieldManager), pod); err != nil {
		return err
	}
	if pod.Status.Phase == corev1.PodRunning {
		return nil // a retried create found it written whole
	}
	pod.Status = RealisticPodStatus(pod, node)
	return c.Status().Update(ctx, pod, client.FieldOwner(KubeletFieldManager))
}

// MakeRealisticPod returns MakePod's pod as the ReplicaSet controller creates it and the
// API server's admission completes it: generateName, the projected service-account volume
// (kube-api-access-*) mounted in every container, env, ports, liveness and readiness probes,
// the not-ready and unreachable tolerations, priority, DNS policy and service links.
func MakeRealisticPod(r, slot int, rsUID types.UID, node string) *corev1.Pod {
	pod := MakePod(r, slot, rsUID, node)
	pod.GenerateName = ReplicaSetName(r) + "-"
	access := "kube-api-access-" + shortHash(pod.Namespace+"/"+pod.Name, 5)
	for i := range pod.Spec.Containers {
		decorateContainer(&pod.Spec.Containers[i], r, access)
	}
	s := &pod.Spec
	s.Volumes = []corev1.Volume{serviceAccountVolume(access)}
	s.RestartPolicy = corev1.RestartPolicyAlways
	s.TerminationGracePeriodSeconds = ptr.To(int64(30))
	s.DNSPolicy = corev1.DNSClusterFirst
	s.ServiceAccountName, s.DeprecatedServiceAccount = "default", "default"
	s.SecurityContext = &corev1.PodSecurityContext{}
	s.SchedulerName = corev1.DefaultSchedulerName
	s.Priority = ptr.To(int32(0))
	s.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	s.EnableServiceLinks = ptr.To(true)
	s.Tolerations = []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
	}
	return pod
}

func decorateContainer(c *corev1.Container, r int, access string) {
	c.Image = fmt.Sprintf("registry.example.com/%s/%s:v1.%d.%d", tier(r), c.Name, r%40, r%7)
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	c.Env = []corev1.EnvVar{
		fieldEnv("POD_NAME", "metadata.name"),
		fieldEnv("POD_NAMESPACE", "metadata.namespace"),
		fieldEnv("POD_IP", "status.podIP"),
		{Name: "LOG_LEVEL", Value: "info"},
		{Name: "HTTP_PORT", Value: "8080"},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability.svc:4317"},
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
			TimeoutSeconds: 1, PeriodSeconds: period, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	c.LivenessProbe, c.ReadinessProbe = probe("/healthz", 10), probe("/readyz", 5)
	c.VolumeMounts = []corev1.VolumeMount{{Name: access, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
}

// serviceAccountVolume is the volume the ServiceAccount admission plugin adds to every pod.
func serviceAccountVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(int32(0o644)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}}}
}

// RealisticPodStatus is the status a kubelet writes for pod (as created, on node index
// node) once its containers run: phase Running, the five conditions, IPs, QoS class and a
// status per container with image and container IDs, allocated resources and mounts.
func RealisticPodStatus(pod *corev1.Pod, node int) corev1.PodStatus {
	t := realisticStart
	cond := func(typ corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: t}
	}
	hostIP := fmt.Sprintf("10.%d.%d.%d", 1+node/65536, node/256%256, node%256)
	podIP := fmt.Sprintf("100.%d.%d.%d", 64+node/256%64, node%256, 2+int(sha256.Sum256([]byte(pod.Name))[0]%250))
	st := corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond(corev1.PodReadyToStartContainers), cond(corev1.PodInitialized), cond(corev1.PodReady),
			cond(corev1.ContainersReady), cond(corev1.PodScheduled),
		},
		HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
		StartTime: &t,
		QOSClass:  corev1.PodQOSGuaranteed,
	}
	for _, c := range pod.Spec.Containers {
		mounts := make([]corev1.VolumeMountStatus, len(c.VolumeMounts))
		for i, m := range c.VolumeMounts {
			mounts[i] = corev1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly,
				RecursiveReadOnly: ptr.To(corev1.RecursiveReadOnlyDisabled)}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name:               c.Name,
			State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
			Ready:              true,
			Started:            ptr.To(true),
			Image:              c.Image,
			ImageID:            c.Image[:strings.LastIndex(c.Image, ":")] + "@sha256:" + shortHash(c.Image, 64),
			ContainerID:        "containerd://" + shortHash(pod.Namespace+"/"+pod.Name+"/"+c.Name, 64),
			AllocatedResources: c.Resources.Requests,
			Resources:          c.Resources.DeepCopy(),
			VolumeMounts:       mounts,
		})
	}
	return st
}

// shortHash is n hex digits of s's SHA-256 (n <= 64): IDs that look like a runtime's.
func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}
