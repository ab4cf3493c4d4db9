package chaos

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// The objects the workload creates, and the labels and annotations that tie them to what
// the checks expect of them.
const (
	// LabelRsv on a pod: it is the pod a "match" reservation of that name waits for. The
	// reservation selects exactly this label, so no other pod can consume it.
	LabelRsv = "chaos.multicache.dev/rsv"
	// LabelNobody is what reservations that must never match select: no pod carries it.
	LabelNobody = "chaos.multicache.dev/nobody"
	// LabelContend on a pod and in two reservations' selectors: one pod, two candidates.
	LabelContend = "chaos.multicache.dev/contend"
	// LabelBurst marks the burst's pods (deleted at once).
	LabelBurst = "chaos.multicache.dev/burst"
	// LabelApp is a label the workload changes on pods.
	LabelApp = "chaos.multicache.dev/app"
	// LabelExtraNode marks nodes the workload creates and deletes.
	LabelExtraNode = "chaos.multicache.dev/extra"

	// SchedulerName is the spec.schedulerName the chaos operator's scheduler serves.
	SchedulerName = "chaos-scheduler"
	// NodeHintAnnotation and BindDelayAnnotation steer the simulated scheduler (see
	// cmd/chaos-operator).
	NodeHintAnnotation  = "chaos.multicache.dev/node"
	BindDelayAnnotation = "chaos.multicache.dev/bind-delay"

	// Every pod asks for this much; best-effort ones are charged to the best-effort pool.
	podCPU, podMemory = "100m", "128Mi"
	// longTTL (seconds) is the TTL and the gangs' schedule timeout of what must not expire
	// during a run: one day, beyond any run.
	longTTL = 86400

	// A node of the workload.
	nodeCPU, nodeMemory = "64", "256Gi"
)

// newPod returns a pod to create (no UID) with the workload's requests.
func newPod(ns, name, node string, bestEffort bool, labels ...string) *corev1.Pod {
	opts := []ts.PodOption{ts.Requests(podCPU, podMemory), ts.WithLabels(append([]string{LabelApp, "a"}, labels...)...)}
	if node != "" {
		opts = append(opts, ts.OnNode(node))
	}
	if bestEffort {
		opts = append(opts, ts.BestEffort())
	}
	p := ts.MakePod(ns, name, opts...)
	p.UID = ""
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	return p
}

// newSchedPod returns an unbound pod for the simulated scheduler.
func newSchedPod(ns, name, nodeHint string, bindDelay string, labels ...string) *corev1.Pod {
	p := newPod(ns, name, "", false, labels...)
	p.Spec.SchedulerName = SchedulerName
	if nodeHint != "" || bindDelay != "" {
		p.Annotations = map[string]string{}
		if nodeHint != "" {
			p.Annotations[NodeHintAnnotation] = nodeHint
		}
		if bindDelay != "" {
			p.Annotations[BindDelayAnnotation] = bindDelay
		}
	}
	return p
}

func newNode(name string, labels ...string) *corev1.Node {
	n := ts.MakeNode(name, nodeCPU, nodeMemory, labels...)
	n.UID = ""
	return n
}

// newNMNode returns a node agent's NMNode; its status must be written after the create.
func newNMNode(name string) *v1alpha1.NMNode {
	nm := ts.MakeNMNode(name, nodeCPU, nodeMemory, "62", nodeMemory)
	nm.UID = ""
	return nm
}

// newCNR returns a node agent's CNR; its status must be written after the create.
func newCNR(name string) *v1alpha1.CustomNodeResource {
	cnr := ts.MakeCNR(name, "8", "8Gi")
	cnr.UID = ""
	return cnr
}

// newReservation returns a reservation of the workload's size selecting key=value.
func newReservation(ns, name, node string, ttl int64, key, value string) *v1alpha1.Reservation {
	r := ts.MakeReservation(ns, name, node, podCPU, podMemory, key, value)
	r.UID = ""
	if ttl > 0 {
		r.Spec.TTLSeconds = ptr.To(ttl)
	}
	return r
}

func newPodGroup(ns, name string, minMember int32, timeout int32) *v1alpha1.PodGroup {
	pg := ts.MakePodGroup(ns, name, minMember)
	pg.UID = ""
	pg.Spec.ScheduleTimeoutSeconds = ptr.To(timeout)
	return pg
}

// podRequests is what the suite expects a pod to be charged: the sum of its containers'
// requests (the workload's pods have nothing else), computed here rather than by the code
// under test.
func podRequests(pod *corev1.Pod) (milliCPU, memory int64) {
	for _, c := range pod.Spec.Containers {
		milliCPU += c.Resources.Requests.Cpu().MilliValue()
		memory += c.Resources.Requests.Memory().Value()
	}
	return milliCPU, memory
}

func quantities(list corev1.ResourceList) (milliCPU, memory int64) {
	cpu, mem := list[corev1.ResourceCPU], list[corev1.ResourceMemory]
	return cpu.MilliValue(), mem.Value()
}
