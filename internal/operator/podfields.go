package operator

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/wiretrim"
)

// The fields of a pod that only the kubelet and the container runtime read: how to start
// and probe its containers, what to write into its projected volumes, its network
// identity, the identity of what runs. The cache
// leaves them out of its pods unless --whole-pods is set (Options.WholePods):
// podTransform clears them and, with --trim-at-decode, they are not even decoded
// (podWirePaths). What kube-scheduler and the descheduler read of running pods stays:
// resources, ports, affinities, tolerations, node selectors, topology spread, volumes,
// claims, security contexts (SELinux labels), priorities, scheduling gates, conditions,
// phase, reason, start time, QoS class, and of container statuses their names, readiness,
// restarts, states (waiting and termination reasons, exit codes) and resources. The lists
// below are field numbers of k8s.io/api/core/v1/generated.proto; TestPodFields_* check
// them against the Go clearing one field at a time, and
// TestPodFields_NoCodeReadsAFieldTheCacheLeavesOut fails when code of this module (or a
// library it hands cached pods to) starts reading one of them.
var (
	// containerRuntimeFields of a Container (and an EphemeralContainer's common part):
	// image 2, command 3, args 4, workingDir 5, env 7, volumeMounts 9, the probes 10, 11
	// and 22, lifecycle 12, terminationMessagePath 13 and policy 20, imagePullPolicy 14,
	// stdin 16, stdinOnce 17, tty 18, envFrom 19, volumeDevices 21.
	containerRuntimeFields = []protowire.Number{2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22}
	// podSpecRuntimeFields of a PodSpec: dnsPolicy 6, serviceAccountName 8, serviceAccount
	// 9, imagePullSecrets 15, hostname 16, subdomain 17, automountServiceAccountToken 21,
	// hostAliases 23, dnsConfig 26, shareProcessNamespace 27, readinessGates 28,
	// enableServiceLinks 30, setHostnameAsFQDN 35, hostnameOverride 41.
	podSpecRuntimeFields = []protowire.Number{6, 8, 9, 15, 16, 17, 21, 23, 26, 27, 28, 30, 35, 41}
	// podStatusRuntimeFields of a PodStatus: message 3, hostIP 5, podIP 6, podIPs 12,
	// ephemeralContainerStatuses 13, hostIPs 16.
	podStatusRuntimeFields = []protowire.Number{3, 5, 6, 12, 13, 16}
	// containerStatusRuntimeFields of a ContainerStatus: image 6, imageID 7, containerID 8,
	// volumeMounts 12, user 13, stopSignal 15.
	containerStatusRuntimeFields = []protowire.Number{6, 7, 8, 12, 13, 15}
	// projectedRuntimeFields of a ProjectedVolumeSource: sources 1 (what the kubelet
	// writes into the volume: on every pod, the service account's token, CA and namespace
	// of kube-api-access-*). The volume and its kind stay: schedulers count volumes by kind.
	projectedRuntimeFields = []protowire.Number{1}
)

// Field numbers of the messages on the way to those fields.
const (
	podSpec, podStatus                          protowire.Number = 2, 3
	specContainers, specInitContainers          protowire.Number = 2, 20
	specEphemeralContainers, ephemeralCommon    protowire.Number = 34, 1
	statusContainerStatuses, statusInitStatuses protowire.Number = 8, 10
	specVolumes, volumeSource, sourceProjected  protowire.Number = 1, 2, 26
)

// podWirePaths are the paths of every runtime field above in a Pod message.
func podWirePaths() []wiretrim.Path {
	var paths []wiretrim.Path
	under := func(prefix []protowire.Number, fields []protowire.Number) {
		for _, f := range fields {
			paths = append(paths, slices.Concat(wiretrim.Path(prefix), wiretrim.Path{f}))
		}
	}
	under([]protowire.Number{podSpec, specContainers}, containerRuntimeFields)
	under([]protowire.Number{podSpec, specInitContainers}, containerRuntimeFields)
	under([]protowire.Number{podSpec, specEphemeralContainers, ephemeralCommon}, containerRuntimeFields)
	under([]protowire.Number{podSpec}, podSpecRuntimeFields)
	under([]protowire.Number{podSpec, specVolumes, volumeSource, sourceProjected}, projectedRuntimeFields)
	under([]protowire.Number{podStatus}, podStatusRuntimeFields)
	under([]protowire.Number{podStatus, statusContainerStatuses}, containerStatusRuntimeFields)
	under([]protowire.Number{podStatus, statusInitStatuses}, containerStatusRuntimeFields)
	return paths
}

// clearRuntimeFields clears in pod what podWirePaths skips at the wire.
func clearRuntimeFields(pod *corev1.Pod) {
	s := &pod.Spec
	for i := range s.Containers {
		clearContainer(&s.Containers[i])
	}
	for i := range s.InitContainers {
		clearContainer(&s.InitContainers[i])
	}
	for i := range s.EphemeralContainers {
		c := corev1.Container(s.EphemeralContainers[i].EphemeralContainerCommon)
		clearContainer(&c)
		s.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
	s.DNSPolicy, s.DNSConfig, s.HostAliases = "", nil, nil
	s.ServiceAccountName, s.DeprecatedServiceAccount, s.AutomountServiceAccountToken = "", "", nil
	s.ImagePullSecrets, s.EnableServiceLinks, s.ShareProcessNamespace, s.ReadinessGates = nil, nil, nil, nil
	s.Hostname, s.Subdomain, s.SetHostnameAsFQDN, s.HostnameOverride = "", "", nil, nil
	for i := range s.Volumes {
		if p := s.Volumes[i].Projected; p != nil {
			p.Sources = nil
		}
	}
	st := &pod.Status
	st.Message = ""
	st.HostIP, st.HostIPs, st.PodIP, st.PodIPs = "", nil, "", nil
	st.EphemeralContainerStatuses = nil
	for i := range st.ContainerStatuses {
		clearContainerStatus(&st.ContainerStatuses[i])
	}
	for i := range st.InitContainerStatuses {
		clearContainerStatus(&st.InitContainerStatuses[i])
	}
}

func clearContainer(c *corev1.Container) {
	c.Image, c.Command, c.Args, c.WorkingDir = "", nil, nil, ""
	c.Env, c.EnvFrom, c.VolumeMounts, c.VolumeDevices = nil, nil, nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "", "", ""
	c.Stdin, c.StdinOnce, c.TTY = false, false, false
}

func clearContainerStatus(s *corev1.ContainerStatus) {
	s.Image, s.ImageID, s.ContainerID = "", "", ""
	s.VolumeMounts, s.User, s.StopSignal = nil, nil, nil
}
