package bench

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	resourcehelper "k8s.io/component-helpers/resource"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Sizes of the differential run: pods created, nodes they are spread over, and the share of
// pods that then get a second version (a resize: new spec and/or status). 5,000 pods give
// every feature of the generator hundreds of times (the rarest, pod-level hugepages, 250)
// and cover the same statements of internal/... and pkg/... as 20,000 did, in a quarter of
// the time under the race detector.
const (
	diffSeed    = 20260722
	diffPods    = 5000
	diffNodes   = 100
	diffUpdates = 3 // one pod in diffUpdates is updated
)

// TestDifferential_NodeChargeMatchesKubeScheduler charges the same random valid pods to
// nodes through multicache's handler (NodeStore) and through kube-scheduler v1.37.1's own
// accounting (framework.NodeInfo.AddPod / RemovePod, its default feature gates), and
// compares what each pod adds (or an update changes) and then every node's requests, field
// by field. The pods are validated by the API server's own validation (create, then status
// update) after its defaulting, so they are pods an API server would store.
func TestDifferential_NodeChargeMatchesKubeScheduler(t *testing.T) {
	for _, gate := range []featuregate.Feature{features.InPlacePodVerticalScaling, features.PodLevelResources,
		features.InPlacePodLevelResourcesVerticalScaling, features.DRANodeAllocatableResources} {
		t.Logf("feature gate %s=%v (default)", gate, utilfeature.DefaultFeatureGate.Enabled(gate))
	}
	g := &podGen{r: rand.New(rand.NewPCG(diffSeed, diffSeed)), t: t}
	h := NewMulticache(nil, stores.NodeStoreName, stores.PodStoreName)
	kube := map[string]*framework.NodeInfo{}
	nodes := make([]string, diffNodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("node-%03d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodes[i], UID: types.UID("uid-" + nodes[i])}}
		if err := h.Add(node); err != nil {
			t.Fatal(err)
		}
		kube[nodes[i]] = framework.NewNodeInfo()
		kube[nodes[i]].SetNode(node)
	}

	var divergentAdds, divergentUpdates, updates int
	divergentPods := map[string]bool{}
	divergent := map[string]int{} // the fields that diverged, counted
	record := func(what string, pod *corev1.Pod, diffs []string) {
		for _, d := range diffs {
			divergent[strings.SplitN(d, ":", 2)[0]]++
		}
		if len(divergentPods) < 5 {
			t.Logf("%s %s diverges: %s\n%s", what, pod.Name, strings.Join(diffs, "; "), describePod(pod))
		}
		divergentPods[pod.Name] = true
	}
	pods := make([]*corev1.Pod, diffPods)
	lists := sharedLists{}
	for i := range pods {
		pod := lists.sharePod(g.pod(i, nodes[i%diffNodes]))
		pods[i] = pod
		name := pod.Spec.NodeName
		mcBefore, kubeBefore := mcRequested(t, h, name), kubeRequested(kube[name])
		if err := h.Add(pod); err != nil {
			t.Fatalf("multicache rejected %s: %v", pod.Name, err)
		}
		// kube-scheduler gets its own copy: the helper it calls grows a pod's inf.Dec-backed
		// pod-level requests by the overhead in place (see stores.PodRequests), and the pods
		// multicache holds must stay what they were.
		kube[name].AddPod(pod.DeepCopy())
		if diffs := compareDelta(mcBefore, mcRequested(t, h, name), kubeBefore, kubeRequested(kube[name])); len(diffs) > 0 {
			divergentAdds++
			record("add of", pod, diffs)
		}
	}
	for i, old := range pods {
		if i%diffUpdates != 0 {
			continue
		}
		pod := lists.sharePod(g.update(old))
		updates++
		name := pod.Spec.NodeName
		mcBefore, kubeBefore := mcRequested(t, h, name), kubeRequested(kube[name])
		if err := h.Update(old, pod); err != nil {
			t.Fatalf("multicache rejected the update of %s: %v", pod.Name, err)
		}
		if err := kube[name].RemovePod(logr.Discard(), old); err != nil {
			t.Fatal(err)
		}
		kube[name].AddPod(pod.DeepCopy())
		if diffs := compareDelta(mcBefore, mcRequested(t, h, name), kubeBefore, kubeRequested(kube[name])); len(diffs) > 0 {
			divergentUpdates++
			record("update of", pod, diffs)
		}
		pods[i] = pod
	}

	divergentNodes := 0
	for _, name := range nodes {
		info, ok := h.NodeInfo(name)
		if !ok {
			t.Fatalf("multicache lost node %s", name)
		}
		want := kube[name]
		diffs := compareResources(info.Requested, want.Requested, int64(len(want.Pods)))
		if len(info.Pods) != len(want.Pods) {
			diffs = append(diffs, fmt.Sprintf("pod list: %d pods, kube-scheduler %d", len(info.Pods), len(want.Pods)))
		}
		if len(diffs) > 0 {
			divergentNodes++
			if divergentNodes <= 3 {
				t.Logf("node %s diverges: %s", name, strings.Join(diffs, "; "))
			}
		}
	}
	for _, err := range h.CheckInvariants() {
		t.Error("multicache invariant:", err)
	}

	t.Logf("%d pods, %d divergent (charged differently on %d of %d adds, %d of %d updates); %d of %d nodes divergent",
		diffPods, len(divergentPods), divergentAdds, diffPods, divergentUpdates, updates, divergentNodes, diffNodes)
	t.Logf("the pods shared %d distinct resource lists", len(lists))
	if len(divergent) > 0 {
		fields := make([]string, 0, len(divergent))
		for f, n := range divergent {
			fields = append(fields, fmt.Sprintf("%s %d", f, n))
		}
		sort.Strings(fields)
		t.Logf("divergent fields: %s", strings.Join(fields, ", "))
	}
	t.Logf("generated: %s", g.coverage())
	if len(divergentPods) > 0 || divergentNodes > 0 {
		t.Errorf("multicache charges %d pods and %d nodes differently from kube-scheduler", len(divergentPods), divergentNodes)
	}
}

// charge is what a node is charged with, in kube-scheduler's units: MilliCPU, bytes, counts.
type charge struct {
	milliCPU, memory, ephemeral, pods int64
	scalar                            map[corev1.ResourceName]int64
}

// mcRequested reads multicache's requests of a node (a copy).
func mcRequested(t *testing.T, h *handler.Handler, node string) charge {
	t.Helper()
	info, ok := h.NodeInfo(node)
	if !ok {
		t.Fatalf("multicache has no node %s", node)
	}
	r := info.Requested
	c := charge{milliCPU: r.MilliCPU, memory: r.Memory, ephemeral: r.EphemeralStorage, pods: r.Pods, scalar: map[corev1.ResourceName]int64{}}
	for k, v := range r.Scalar {
		c.scalar[k] = v
	}
	return c
}

// kubeRequested reads kube-scheduler's requests of a node. Its Requested never counts pods
// (AllowedPodNumber stays 0); the pods it holds do.
func kubeRequested(n *framework.NodeInfo) charge {
	r := n.Requested
	c := charge{milliCPU: r.MilliCPU, memory: r.Memory, ephemeral: r.EphemeralStorage, pods: int64(len(n.Pods)), scalar: map[corev1.ResourceName]int64{}}
	for k, v := range r.ScalarResources {
		c.scalar[k] = v
	}
	return c
}

// compareDelta compares what one event changed on a node, multicache against kube.
func compareDelta(mcBefore, mcAfter, kubeBefore, kubeAfter charge) []string {
	return compareCharges(sub(mcAfter, mcBefore), sub(kubeAfter, kubeBefore))
}

func sub(a, b charge) charge {
	d := charge{milliCPU: a.milliCPU - b.milliCPU, memory: a.memory - b.memory, ephemeral: a.ephemeral - b.ephemeral,
		pods: a.pods - b.pods, scalar: map[corev1.ResourceName]int64{}}
	for k, v := range a.scalar {
		d.scalar[k] += v
	}
	for k, v := range b.scalar {
		d.scalar[k] -= v
	}
	return d
}

// compareResources compares a node's requests (kube's pod count given apart).
func compareResources(mc store.Resources, kube *framework.Resource, kubePods int64) []string {
	m := charge{milliCPU: mc.MilliCPU, memory: mc.Memory, ephemeral: mc.EphemeralStorage, pods: mc.Pods, scalar: mc.Scalar}
	k := charge{milliCPU: kube.MilliCPU, memory: kube.Memory, ephemeral: kube.EphemeralStorage, pods: kubePods, scalar: kube.ScalarResources}
	return compareCharges(m, k)
}

// compareCharges lists the fields that differ; a missing scalar equals zero.
func compareCharges(mc, kube charge) []string {
	var diffs []string
	field := func(name string, a, b int64) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s: multicache %d, kube-scheduler %d", name, a, b))
		}
	}
	field("cpu", mc.milliCPU, kube.milliCPU)
	field("memory", mc.memory, kube.memory)
	field("ephemeral-storage", mc.ephemeral, kube.ephemeral)
	field("pods", mc.pods, kube.pods)
	names := map[corev1.ResourceName]bool{}
	for k := range mc.scalar {
		names[k] = true
	}
	for k := range kube.scalar {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, string(k))
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		field(k, mc.scalar[corev1.ResourceName(k)], kube.scalar[corev1.ResourceName(k)])
	}
	return diffs
}

// describePod prints the resource-relevant parts of a pod, for a divergence report.
func describePod(p *corev1.Pod) string {
	var b strings.Builder
	list := func(l corev1.ResourceList) string {
		keys := make([]string, 0, len(l))
		for k, q := range l {
			keys = append(keys, string(k)+"="+q.String())
		}
		sort.Strings(keys)
		return "{" + strings.Join(keys, " ") + "}"
	}
	for _, c := range p.Spec.InitContainers {
		fmt.Fprintf(&b, "  init %s sidecar=%v requests %s\n", c.Name, c.RestartPolicy != nil, list(c.Resources.Requests))
	}
	for _, c := range p.Spec.Containers {
		fmt.Fprintf(&b, "  container %s requests %s\n", c.Name, list(c.Resources.Requests))
	}
	if p.Spec.Resources != nil {
		fmt.Fprintf(&b, "  pod-level requests %s\n", list(p.Spec.Resources.Requests))
	}
	if p.Spec.Overhead != nil {
		fmt.Fprintf(&b, "  overhead %s\n", list(p.Spec.Overhead))
	}
	for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		var actuated corev1.ResourceList
		if s.Resources != nil {
			actuated = s.Resources.Requests
		}
		fmt.Fprintf(&b, "  status %s allocated %s actuated %s\n", s.Name, list(s.AllocatedResources), list(actuated))
	}
	if p.Status.Resources != nil || p.Status.AllocatedResources != nil {
		var actuated corev1.ResourceList
		if p.Status.Resources != nil {
			actuated = p.Status.Resources.Requests
		}
		fmt.Fprintf(&b, "  pod status allocated %s actuated %s\n", list(p.Status.AllocatedResources), list(actuated))
	}
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "  condition %s %s\n", c.Type, c.Reason)
	}
	return b.String()
}

// podGen generates random valid pods from a fixed seed.
type podGen struct {
	r *rand.Rand
	t *testing.T
	// seen counts what the pods exercised, for the log.
	seen map[string]int
}

// Quantities: ordinary ones, and odd ones that round (1.5m cpu, 100.5 bytes).
var (
	cpuQuantities       = []string{"100m", "250m", "500m", "1", "2", "1.5m", "0.5m", "333m", "1500u", "2.0005", "7"}
	memoryQuantities    = []string{"64Mi", "128Mi", "1Gi", "1.5Gi", "100.5", "123456789", "0.5Ki", "100.25", "1e3"}
	ephemeralQuantities = []string{"1Gi", "100.5", "10M", "2.5Mi", "1.25"}
	countQuantities     = []string{"1", "2", "4"}
	nativeQuantities    = []string{"1", "1.5", "0.25", "3"}
	hugepageQuantities  = []string{"2Mi", "4Mi", "8Mi"}
)

func (g *podGen) count(what string) {
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	g.seen[what]++
}

func (g *podGen) coverage() string {
	keys := make([]string, 0, len(g.seen))
	for k, n := range g.seen {
		keys = append(keys, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func (g *podGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *podGen) pick(from []string) resource.Quantity {
	return resource.MustParse(from[g.r.IntN(len(from))])
}

// requirements returns a random valid container resource requirement.
func (g *podGen) requirements() corev1.ResourceRequirements {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	if g.chance(0.8) {
		req[corev1.ResourceCPU] = g.pick(cpuQuantities)
		if g.chance(0.2) {
			// A limit at least as large; or a limit alone (defaulting copies it to requests).
			q := req[corev1.ResourceCPU]
			q.Add(g.pick(cpuQuantities))
			lim[corev1.ResourceCPU] = q
			if g.chance(0.3) {
				delete(req, corev1.ResourceCPU)
				g.count("limit-only cpu")
			}
		}
	}
	if g.chance(0.8) {
		req[corev1.ResourceMemory] = g.pick(memoryQuantities)
	}
	if g.chance(0.3) {
		req[corev1.ResourceEphemeralStorage] = g.pick(ephemeralQuantities)
	}
	if g.chance(0.2) {
		q := g.pick(countQuantities)
		req["example.com/gpu"], lim["example.com/gpu"] = q, q.DeepCopy()
	}
	if g.chance(0.1) {
		q := g.pick(countQuantities)
		req["example.com/foo"], lim["example.com/foo"] = q, q.DeepCopy()
	}
	if g.chance(0.1) {
		req["kubernetes.io/foo"] = g.pick(nativeQuantities)
	}
	if g.chance(0.1) {
		// Hugepages are not overcommitted (request = limit) and need cpu or memory.
		q := g.pick(hugepageQuantities)
		req["hugepages-2Mi"], lim["hugepages-2Mi"] = q, q.DeepCopy()
		if _, ok := req[corev1.ResourceMemory]; !ok {
			req[corev1.ResourceMemory] = g.pick(memoryQuantities)
		}
	}
	rr := corev1.ResourceRequirements{}
	if len(req) > 0 {
		rr.Requests = req
	}
	if len(lim) > 0 {
		rr.Limits = lim
	}
	return rr
}

// statusList returns what a kubelet might report for a container or pod: the spec's
// requests, some changed (a resize), some dropped, now and then a name that is not a
// resource kube-scheduler counts ("foo", "attachable-volumes-x") or one the spec lacks.
func (g *podGen) statusList(spec corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range spec {
		switch {
		case g.chance(0.1):
			continue
		case g.chance(0.4):
			switch name {
			case corev1.ResourceCPU:
				out[name] = g.pick(cpuQuantities)
			case corev1.ResourceMemory:
				out[name] = g.pick(memoryQuantities)
			case corev1.ResourceEphemeralStorage:
				out[name] = g.pick(ephemeralQuantities)
			default:
				out[name] = g.pick(countQuantities)
			}
		default:
			out[name] = q.DeepCopy()
		}
	}
	if g.chance(0.1) {
		out["foo"] = g.pick(countQuantities)
		g.count("status name foo")
	}
	if g.chance(0.05) {
		out["attachable-volumes-x"] = g.pick(countQuantities)
		g.count("status attachable-volumes")
	}
	if g.chance(0.05) {
		out["example.com/bar"] = g.pick(countQuantities)
	}
	if g.chance(0.1) {
		out[corev1.ResourceCPU] = g.pick(cpuQuantities)
	}
	return out
}

// pod returns pod i, bound to node, valid for creation and for its status update.
func (g *podGen) pod(i int, node string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "diff", Name: fmt.Sprintf("p-%05d", i), UID: types.UID(fmt.Sprintf("uid-%05d", i)), ResourceVersion: "1"},
		Spec:       g.spec(),
	}
	pod.Spec.NodeName = node
	if g.chance(0.3) {
		// Pod-level requests, from the containers' defaulted requests: validation wants them
		// at least the containers' aggregate.
		k8sv1.SetObjectDefaults_Pod(pod)
		pod.Spec.Resources = g.podLevel(pod)
	}
	pod, err := g.create(pod)
	if err != nil {
		// The generator makes valid pods only: an invalid one is a bug of the generator.
		g.t.Fatalf("generated an invalid pod: %v\n%s", err, describePod(pod))
	}
	withStatus := pod.DeepCopy()
	g.status(withStatus)
	if err := g.validateStatus(withStatus, pod); err != nil {
		g.t.Fatalf("generated an invalid status: %v\n%s", err, describePod(withStatus))
	}
	return withStatus
}

// update returns a new version of pod: a spec resize, a status change, or both.
func (g *podGen) update(old *corev1.Pod) *corev1.Pod {
	pod := old.DeepCopy()
	pod.ResourceVersion = "2"
	if g.chance(0.5) {
		// A resize through the resize subresource changes container requests and limits.
		for i := range pod.Spec.Containers {
			if g.chance(0.5) {
				pod.Spec.Containers[i].Resources = g.requirements()
			}
		}
		if pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0 {
			k8sv1.SetObjectDefaults_Pod(pod)
			pod.Spec.Resources = g.podLevel(pod)
		}
		if resized, err := g.create(pod); err != nil {
			// Not every random resize is valid (a container now above the pod level): keep
			// the old spec then.
			pod.Spec = *old.Spec.DeepCopy()
		} else {
			pod.Spec = resized.Spec
			g.count("update: spec resize")
		}
	}
	if g.chance(0.7) {
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning}
		g.status(pod)
		g.count("update: status")
	}
	if err := g.validateStatus(pod, old); err != nil {
		g.t.Fatalf("generated an invalid status update: %v\n%s", err, describePod(pod))
	}
	return pod
}

// spec returns a random pod spec: containers, init containers, sidecars, overhead.
func (g *podGen) spec() corev1.PodSpec {
	var spec corev1.PodSpec
	for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
		spec.Containers = append(spec.Containers, corev1.Container{
			Name: fmt.Sprintf("c%d", i), Image: "registry.k8s.io/pause:3.10", Resources: g.requirements(),
		})
	}
	for i, n := 0, g.r.IntN(4); i < n; i++ {
		c := corev1.Container{Name: fmt.Sprintf("i%d", i), Image: "registry.k8s.io/pause:3.10", Resources: g.requirements()}
		if g.chance(0.5) {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			g.count("sidecar")
		} else {
			g.count("init container")
		}
		spec.InitContainers = append(spec.InitContainers, c)
	}
	if g.chance(0.2) {
		spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: g.pick(cpuQuantities)}
		if g.chance(0.5) {
			spec.Overhead[corev1.ResourceMemory] = g.pick(memoryQuantities)
		}
		if g.chance(0.2) {
			spec.Overhead["example.com/foo"] = g.pick(countQuantities)
		}
		g.count("overhead")
	}
	return spec
}

// podLevel returns pod-level requirements for the containers of pod: cpu and/or memory
// (and sometimes hugepages) at least the containers' aggregate, as validation demands.
func (g *podGen) podLevel(pod *corev1.Pod) *corev1.ResourceRequirements {
	aggregate := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{})
	req := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if !g.chance(0.7) {
			continue
		}
		q := aggregate[name]
		if g.chance(0.7) {
			if name == corev1.ResourceCPU {
				q.Add(g.pick(cpuQuantities))
			} else {
				q.Add(g.pick(memoryQuantities))
			}
		}
		req[name] = q
	}
	rr := &corev1.ResourceRequirements{}
	if hp, ok := limits["hugepages-2Mi"]; ok && g.chance(0.5) {
		// Pod-level hugepages: request = limit, at least the containers'.
		rr.Limits = corev1.ResourceList{"hugepages-2Mi": hp.DeepCopy()}
		req["hugepages-2Mi"] = hp.DeepCopy()
		g.count("pod-level hugepages")
	}
	_, cpu := req[corev1.ResourceCPU]
	if _, memory := req[corev1.ResourceMemory]; !cpu && !memory {
		// Pod-level resources need cpu or memory.
		req[corev1.ResourceCPU] = aggregate[corev1.ResourceCPU]
		if q := req[corev1.ResourceCPU]; q.IsZero() {
			req[corev1.ResourceCPU] = g.pick(cpuQuantities)
		}
	}
	rr.Requests = req
	g.count("pod-level resources")
	return rr
}

// status fills the status of a running pod: per-container allocated and actuated resources
// (in-place resize), pod-level status resources, a PodResizePending condition.
func (g *podGen) status(pod *corev1.Pod) {
	pod.Status.Phase = corev1.PodRunning
	if !g.chance(0.6) {
		return
	}
	statuses := func(containers []corev1.Container) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, c := range containers {
			if g.chance(0.2) {
				continue // no status yet
			}
			s := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sha256:abc", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
			if g.chance(0.7) {
				s.AllocatedResources = g.statusList(c.Resources.Requests)
				g.count("status allocatedResources")
			}
			if g.chance(0.7) {
				s.Resources = &corev1.ResourceRequirements{Requests: g.statusList(c.Resources.Requests)}
				if g.chance(0.1) {
					s.Resources.Requests = nil // limits only reported
				}
				g.count("status resources")
			}
			out = append(out, s)
		}
		return out
	}
	pod.Status.ContainerStatuses = statuses(pod.Spec.Containers)
	pod.Status.InitContainerStatuses = statuses(pod.Spec.InitContainers)
	if g.chance(0.3) {
		var base corev1.ResourceList
		if pod.Spec.Resources != nil {
			base = pod.Spec.Resources.Requests
		} else {
			base = resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
		}
		if g.chance(0.8) {
			pod.Status.AllocatedResources = g.statusList(base)
			g.count("pod status allocatedResources")
		}
		if g.chance(0.8) {
			pod.Status.Resources = &corev1.ResourceRequirements{Requests: g.statusList(base)}
			if g.chance(0.1) {
				pod.Status.Resources.Requests = nil
			}
			g.count("pod status resources")
		}
	}
	switch x := g.r.Float64(); {
	case x < 0.2:
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible, Message: "node is too small",
		})
		g.count("resize Infeasible")
	case x < 0.3:
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred,
		})
		g.count("resize Deferred")
	case x < 0.4:
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
		})
	}
}

// create returns pod as the API server would store it, or why it would refuse it: its
// defaulting (SetObjectDefaults_Pod, then the pod-level defaulting of the pod strategy's
// PrepareForCreate), then the create validation of the pod strategy.
func (g *podGen) create(pod *corev1.Pod) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	k8sv1.SetObjectDefaults_Pod(pod)
	internal := toInternal(g.t, pod)
	podutil.DefaultPodLevelResources(internal)
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&internal.Spec, nil, &internal.ObjectMeta, nil)
	opts.ResourceIsPod = true
	if err := corevalidation.ValidatePodCreate(internal, opts).ToAggregate(); err != nil {
		return pod, err
	}
	out := &corev1.Pod{}
	if err := k8sv1.Convert_core_Pod_To_v1_Pod(internal, out, nil); err != nil {
		g.t.Fatal(err)
	}
	return out, nil
}

// validateStatus runs the API server's status-update validation on pod over old.
func (g *podGen) validateStatus(pod, old *corev1.Pod) error {
	n, o := toInternal(g.t, pod), toInternal(g.t, old)
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&n.Spec, &o.Spec, &n.ObjectMeta, &o.ObjectMeta)
	opts.ResourceIsPod = true
	return corevalidation.ValidatePodStatusUpdate(n, o, opts).ToAggregate()
}

func toInternal(t *testing.T, pod *corev1.Pod) *core.Pod {
	out := &core.Pod{}
	if err := k8sv1.Convert_v1_Pod_To_core_Pod(pod, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}
