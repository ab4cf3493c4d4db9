package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

// devAPICases is how many random worlds go through the real API server.
const devAPICases = 25

// caseLabel marks every object of one world stored in the API server.
const caseLabel = "multicache.dev/diff-case"

// TestDifferential_DevicesThroughTheAPIServer is TestDifferential_DevicesMatchKubeScheduler
// on objects the real API server validated, defaulted and stored: each random world is
// created (claims' allocations written to their status as kube-scheduler writes them),
// listed back, and the listed objects are what multicache and kube-scheduler's code both
// get.
func TestDifferential_DevicesThroughTheAPIServer(t *testing.T) {
	env := testsupport.StartForTest(t, testsupport.StartOptions{})
	r := rand.New(rand.NewPCG(devDiffSeed+1, devDiffSeed+1))
	var nodesChecked, devicesChecked, allocatedChecked int
	for c := range devAPICases {
		w := storeWorld(t, env.Client, newDeviceWorld(r, fmt.Sprintf("c%d-", c)))
		got := feedDevices(t, r, w)
		want := kubeSchedulerDevices(t, w)
		n, _, d, a := compareDevices(t, c, w, got, want)
		nodesChecked, devicesChecked, allocatedChecked = nodesChecked+n, devicesChecked+d, allocatedChecked+a
		if t.Failed() {
			t.Fatalf("case %d diverges; the world as stored:\n%s", c, w)
		}
	}
	t.Logf("%d random worlds through the API server: %d nodes, %d published devices, %d allocated devices checked against kube-scheduler v1.37.1",
		devAPICases, nodesChecked, devicesChecked, allocatedChecked)
	if devicesChecked == 0 || allocatedChecked == 0 {
		t.Fatal("the generator produced no device or no allocation: the comparison checked nothing")
	}
}

// storeWorld creates a world's objects in the API server and returns them as listed back.
func storeWorld(t *testing.T, c client.Client, w *deviceWorld) *deviceWorld {
	t.Helper()
	ctx := context.Background()
	label := map[string]string{caseLabel: w.ns}
	create := func(obj client.Object) {
		t.Helper()
		obj.SetUID("")
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[caseLabel] = w.ns
		obj.SetLabels(labels)
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	// Results with admin access are allowed in namespaces labelled for it.
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns, Labels: map[string]string{"resource.kubernetes.io/admin-access": "true"}}})
	for _, n := range w.nodes {
		create(n.DeepCopy())
	}
	for _, dc := range w.classes {
		create(dc.DeepCopy())
	}
	for _, s := range w.slices {
		create(s.DeepCopy())
	}
	for _, claim := range w.claims {
		obj := claim.DeepCopy()
		obj.Status = resourcev1.ResourceClaimStatus{}
		create(obj)
		obj.Status = claim.Status
		if err := c.Status().Update(ctx, obj); err != nil {
			t.Fatalf("allocating claim %s: %v", obj.Name, err)
		}
	}

	stored := &deviceWorld{prefix: w.prefix, ns: w.ns, pools: w.pools}
	var nodes corev1.NodeList
	var classes resourcev1.DeviceClassList
	var slices resourcev1.ResourceSliceList
	var claims resourcev1.ResourceClaimList
	for _, l := range []client.ObjectList{&nodes, &classes, &slices} {
		if err := c.List(ctx, l, client.MatchingLabels(label)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.List(ctx, &claims, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		stored.nodes = append(stored.nodes, &nodes.Items[i])
	}
	for i := range classes.Items {
		stored.classes = append(stored.classes, &classes.Items[i])
	}
	for i := range slices.Items {
		stored.slices = append(stored.slices, &slices.Items[i])
	}
	for i := range claims.Items {
		stored.claims = append(stored.claims, &claims.Items[i])
	}
	if len(stored.nodes) != len(w.nodes) || len(stored.classes) != len(w.classes) || len(stored.slices) != len(w.slices) || len(stored.claims) != len(w.claims) {
		t.Fatalf("listed back %d nodes, %d classes, %d slices, %d claims; created %d, %d, %d, %d", len(stored.nodes), len(stored.classes),
			len(stored.slices), len(stored.claims), len(w.nodes), len(w.classes), len(w.slices), len(w.claims))
	}
	return stored
}
