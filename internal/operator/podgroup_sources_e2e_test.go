package operator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// sourceCase is one PodGroup source: how to create its group and make a pod its member.
type sourceCase struct {
	source store.PodGroupSource
	group  func(ns string) client.Object
	member ts.PodOption
}

var sourceCases = []sourceCase{
	{store.PodGroupSourceMulticache, func(ns string) client.Object { return ts.MakePodGroup(ns, "gang", 3) }, ts.InGroup("gang")},
	{store.PodGroupSourceNative, func(ns string) client.Object { return ts.MakeNativePodGroup(ns, "gang", 3) }, ts.InNativeGroup("gang")},
	{store.PodGroupSourceSchedulerPlugins, func(ns string) client.Object { return ts.MakeSchedulerPluginsPodGroup(ns, "gang", 3) }, ts.InSchedulerPluginsGroup("gang")},
}

// TestPodGroupSources_GangsOfEveryAPIGoPendingScheduledRunning runs against an API server
// that serves all three PodGroup APIs (Kubernetes' behind its feature gate, scheduler-plugins'
// from the test fixture CRD). A group named "gang" in one namespace exists in all three;
// each gang of minCount 3 goes Pending -> Scheduled -> Running as its pods bind and run, a
// member leaving lowers its counts, only multicache's own gets a status, the cache, the
// drift comparison and a second operator's catch-up agree, and the verify loop repairs a
// lost group of another API.
func TestPodGroupSources_GangsOfEveryAPIGoPendingScheduledRunning(t *testing.T) {
	t.Parallel() // its own control plane and operators: overlaps the other parallel tests
	e := ts.StartForTest(t, ts.StartOptions{APIServerArgs: ts.NativePodGroupAPI, CRDPaths: []string{ts.SchedulerPluginsPodGroupCRD}})
	c := e.Client
	const ns = "gangs"
	mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, ts.MakeNode("pg-node", "64", "256Gi"))

	// The verify loop runs only when the test asks (its runs are counted below).
	op := startOperatorOn(t, e, func(o *Options) { o.VerifyPeriod = 0 })
	if want := store.PodGroupSources; !slices.Equal(op.PodGroupSources, want) {
		t.Fatalf("sources found by discovery: %v, want %v", op.PodGroupSources, want)
	}

	for _, sc := range sourceCases {
		t.Run(string(sc.source), func(t *testing.T) {
			key := podgroupstore.Key(sc.source, ns, "gang")
			expect := func(phase v1alpha1.PodGroupPhase, counts store.PodGroupCounts) {
				t.Helper()
				eventually(t, fmt.Sprintf("%s is %s with %+v", key, phase, counts), func() (bool, string) {
					st, ok := op.Cache.PodGroup(key)
					got := st.Phase(op.Cache.Config().Clock().Now())
					return ok && st.PodGroup != nil && got == phase && st.Counts == counts, fmt.Sprintf("found %v, %s %+v", ok, got, st.Counts)
				})
			}
			mustCreate(t, c, sc.group(ns))
			expect(v1alpha1.PodGroupPending, store.PodGroupCounts{})
			var pods []*corev1.Pod
			for i := range 3 {
				p := ts.MakePod(ns, fmt.Sprintf("%s-%d", sc.source, i), sc.member)
				mustCreate(t, c, p)
				pods = append(pods, p)
			}
			expect(v1alpha1.PodGroupPreScheduling, store.PodGroupCounts{Pending: 3})
			for _, p := range pods {
				mustBind(t, c, p, "pg-node")
			}
			expect(v1alpha1.PodGroupScheduled, store.PodGroupCounts{Scheduled: 3})
			for _, p := range pods {
				mustSetPhase(t, c, p, corev1.PodRunning)
			}
			expect(v1alpha1.PodGroupRunning, store.PodGroupCounts{Running: 3})
			if err := c.Delete(ctx(), pods[0], client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
			expect(v1alpha1.PodGroupPending, store.PodGroupCounts{Running: 2})
		})
	}

	// Only multicache's own PodGroup gets a status; the others are read, never written.
	eventually(t, "multicache's own PodGroup status counts 2 running", func() (bool, string) {
		pg := &v1alpha1.PodGroup{}
		if err := c.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "gang"}, pg); err != nil {
			return false, err.Error()
		}
		return pg.Status.Running == 2, fmt.Sprintf("%+v", pg.Status)
	})
	sp := ts.MakeSchedulerPluginsPodGroup(ns, "gang", 3)
	if err := c.Get(ctx(), client.ObjectKeyFromObject(sp), sp); err != nil {
		t.Fatal(err)
	}
	if status, found, _ := unstructured.NestedMap(sp.Object, "status"); found && len(status) > 0 {
		t.Errorf("multicache wrote the scheduler-plugins PodGroup's status: %v", status)
	}
	for _, name := range []string{"gang", "scheduling.k8s.io/gang", "scheduling.x-k8s.io/gang"} {
		d, ok := cacheDump(t, op).PodGroups[ns+"/"+name]
		if !ok || d.Counts.Running != 2 || d.MinMember != 3 {
			t.Errorf("dump of %s/%s: %v %+v", ns, name, ok, d)
		}
	}

	// The comparisons list every source: nothing differs, from the API or the informers.
	consistent(t, op)
	res, err := op.Verify.Run(ctx())
	if err != nil || len(res.Drift) != 0 || res.Suspects != 0 {
		t.Errorf("verify run: %+v, %v; want no drift and no suspect", res, err)
	}

	// The verify loop repairs a lost group of another API: found twice, re-fed to its
	// source's feed.
	for _, src := range []store.PodGroupSource{store.PodGroupSourceNative, store.PodGroupSourceSchedulerPlugins} {
		last, ok := op.Cache.LastSeen(stores.KindPodGroup, "", podgroupstore.Key(src, ns, "gang"))
		if !ok {
			t.Fatalf("%s group not cached", src)
		}
		if err := op.Cache.Delete(last); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := op.Verify.Run(ctx()); err != nil || res.Suspects != 2 {
		t.Fatalf("first verify run after losing two groups: %+v, %v; want 2 suspects", res, err)
	}
	res, err = op.Verify.Run(ctx())
	var drifted []string
	for _, d := range res.Drift {
		drifted = append(drifted, d.Key)
	}
	slices.Sort(drifted)
	if want := []string{ns + "/scheduling.k8s.io/gang", ns + "/scheduling.x-k8s.io/gang"}; err != nil || !slices.Equal(drifted, want) {
		t.Fatalf("second verify run: drift %v, %v; want %v", drifted, err, want)
	}
	for _, src := range []store.PodGroupSource{store.PodGroupSourceNative, store.PodGroupSourceSchedulerPlugins} {
		key := podgroupstore.Key(src, ns, "gang")
		eventually(t, string(src)+" group re-fed", func() (bool, string) {
			st, ok := op.Cache.PodGroup(key)
			return ok && st.PodGroup != nil && st.Counts.Running == 2, fmt.Sprintf("%v %+v", ok, st)
		})
	}

	// A second operator catches up with every source's groups.
	second := startOperatorOn(t, e)
	for _, sc := range sourceCases {
		key := podgroupstore.Key(sc.source, ns, "gang")
		if st, ok := second.Cache.PodGroup(key); !ok || st.Counts != (store.PodGroupCounts{Running: 2}) {
			t.Errorf("after catch-up, %s: %v %+v", key, ok, st.Counts)
		}
	}
	// Deleting a group: Kubernetes' keeps its protection finalizer while members are left
	// (and no kube-controller-manager runs here), so it is seen being deleted;
	// scheduler-plugins' goes, and its members stay counted until they go too.
	for _, src := range []store.PodGroupSource{store.PodGroupSourceNative, store.PodGroupSourceSchedulerPlugins} {
		if err := c.Delete(ctx(), groupOf(ns, src)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the native group is being deleted", func() (bool, string) {
		st, ok := op.Cache.PodGroup(podgroupstore.Key(store.PodGroupSourceNative, ns, "gang"))
		return ok && st.PodGroup != nil && st.PodGroup.DeletionTimestamp != nil, fmt.Sprintf("%v %+v", ok, st.PodGroup)
	})
	spKey := podgroupstore.Key(store.PodGroupSourceSchedulerPlugins, ns, "gang")
	eventually(t, "the scheduler-plugins group has no object, its 2 members are still counted", func() (bool, string) {
		st, ok := op.Cache.PodGroup(spKey)
		return ok && st.PodGroup == nil && st.Counts.Running == 2, fmt.Sprintf("%v %+v", ok, st)
	})
	for i := 1; i < 3; i++ {
		if err := c.Delete(ctx(), ts.MakePod(ns, fmt.Sprintf("%s-%d", store.PodGroupSourceSchedulerPlugins, i)), client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the scheduler-plugins group is gone with its last member", func() (bool, string) {
		st, ok := op.Cache.PodGroup(spKey)
		return !ok, fmt.Sprintf("%+v", st)
	})
	consistent(t, op)
}

// groupOf returns the group object of a source, for Get and Delete.
func groupOf(ns string, src store.PodGroupSource) client.Object {
	for _, c := range sourceCases {
		if c.source == src {
			return c.group(ns)
		}
	}
	return nil
}

// TestPodGroupSources_AbsentAPIsAreNotWatched runs against the package's API server, which
// serves neither Kubernetes' PodGroup nor scheduler-plugins': by default they are left out
// (one info line, no error) and the operator catches up and compares cleanly; naming one
// explicitly is a start-up error that says how to serve it.
func TestPodGroupSources_AbsentAPIsAreNotWatched(t *testing.T) {
	var errorLines, infoLines []string
	log := funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"error"`) {
			errorLines = append(errorLines, args)
		} else {
			infoLines = append(infoLines, args)
		}
	}, funcr.Options{})
	sources, err := resolvePodGroupSources(env.Config, DefaultOptions(), log)
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.PodGroupSource{store.PodGroupSourceMulticache}; !slices.Equal(sources, want) {
		t.Errorf("sources %v, want %v", sources, want)
	}
	if len(errorLines) > 0 || len(infoLines) != 1 || !strings.Contains(infoLines[0], `"notServed"`) ||
		!strings.Contains(infoLines[0], `"native"`) || !strings.Contains(infoLines[0], `"scheduler-plugins"`) {
		t.Errorf("logged errors %q and info %q; want one info line naming the sources not served", errorLines, infoLines)
	}

	op := startOperator(t)
	if want := []store.PodGroupSource{store.PodGroupSourceMulticache}; !slices.Equal(op.PodGroupSources, want) {
		t.Errorf("operator sources %v, want %v", op.PodGroupSources, want)
	}
	// Caught up (startOperator waited for it) and still running: a feed of an absent API
	// would never sync its informer, so the cache would never catch up (and its controller
	// would stop the manager with "no matches for kind"). The comparison, which lists through
	// the informers, lists nothing of those APIs either.
	if res, err := op.Verify.Run(ctx()); err != nil {
		t.Errorf("verify run: %+v, %v", res, err)
	}
	select {
	case err := <-op.done:
		t.Fatalf("the operator stopped: %v", err)
	default:
	}

	for _, tc := range []struct{ flag, want string }{
		{"native", "GenericWorkload=true"},
		{"multicache,scheduler-plugins", "podgroups.scheduling.x-k8s.io"},
	} {
		opts := DefaultOptions()
		opts.MetricsBindAddress, opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0", "0"
		opts.PodGroupSources = strings.Split(tc.flag, ",")
		_, err := New(env.Config, opts)
		if err == nil || !strings.Contains(err.Error(), "--podgroup-sources="+tc.flag) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--podgroup-sources=%s on a server without it: %v; want an error naming the flag and saying %q", tc.flag, err, tc.want)
		}
	}
}

func mustCreate(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		o.SetUID("")
		if err := c.Create(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func mustBind(t *testing.T, c client.Client, pod *corev1.Pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := c.SubResource("binding").Create(ctx(), pod, b); err != nil {
		t.Fatal(err)
	}
}

func mustSetPhase(t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = phase
	if err := c.Status().Update(ctx(), pod); err != nil {
		t.Fatal(err)
	}
}
