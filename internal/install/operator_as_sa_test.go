package install

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/operator"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

const (
	// operatorNamespace and operatorSA are where install.yaml runs the operator.
	operatorNamespace = "multicache-system"
	operatorSA        = "multicache-controller-manager"
)

// operatorUser is the user name the API server gives the operator's service account.
var operatorUser = "system:serviceaccount:" + operatorNamespace + ":" + operatorSA

// asServiceAccount runs one operator in-process as the service account install.yaml
// creates (a client certificate with the service account's user name and groups, which
// RBAC treats as the service account), with every server on: leader election on a Lease in
// multicache-system, secure metrics on a free loopback port, the debug server. It returns
// the operator and the metrics URL; the operator stops (and releases its lease) at cleanup
// or through the returned stop.
func asServiceAccount(t *testing.T) (op *operator.Operator, metricsURL string, stop func()) {
	t.Helper()
	cfg, err := env.AddUser(operatorUser, "system:serviceaccounts", "system:serviceaccounts:"+operatorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, operatorUser, authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"})
	port := freePort(t)
	opts := operator.DefaultOptions()
	opts.MetricsBindAddress = fmt.Sprintf("127.0.0.1:%d", port)
	opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "127.0.0.1:0"
	opts.LeaderElect, opts.LeaderElectionNamespace = true, operatorNamespace
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = ptr.To(4*time.Second), ptr.To(3*time.Second), ptr.To(500*time.Millisecond)
	opts.Period, opts.ReservationGCGrace, opts.VerifyPeriod = 100*time.Millisecond, time.Second, time.Second
	opts.SkipControllerNameValidation = true
	op, err = operator.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the operator stopped with %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the operator did not stop within a minute")
		}
	}
	t.Cleanup(stop)
	select {
	case <-op.Manager.Elected():
	case err := <-done:
		t.Fatalf("the operator stopped before it was elected: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the operator was not elected leader within a minute")
	}
	waitFor(t, "the operator caught up", func() (bool, string) { return op.Ready(), op.CatchUp.Status() })
	return op, fmt.Sprintf("https://127.0.0.1:%d/metrics", port), stop
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// waitAllowed waits until the API server's RBAC authorizer (which reads bindings through
// its own informer) allows user the request.
func waitAllowed(t *testing.T, user string, attrs authorizationv1.ResourceAttributes) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s may %s %s", user, attrs.Verb, attrs.Resource), func() (bool, string) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &attrs}}
		if err := env.Client.Create(context.Background(), sar); err != nil {
			return false, err.Error()
		}
		return sar.Status.Allowed, sar.Status.Reason
	})
}

// waitFor polls cond every 50 ms until it holds, failing after a minute with its message.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ts.Eventually(t, what, time.Minute, 50*time.Millisecond, cond)
}

// exerciseEveryPath drives every path of the operator that talks to the API server: every
// watched kind created, updated and deleted; the status writers of PodGroups, Movements
// and Reservations; their events; a reservation expired and collected; the debug server's comparison with
// the API; and a scrape of the secure metrics endpoint, allowed and denied.
func exerciseEveryPath(t *testing.T, op *operator.Operator, metricsURL string) {
	t.Helper()
	ctx := context.Background()
	ns := "rbac-audit"
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	node, nm, cnr := ts.MakeNode("audit-node", "16", "64Gi"), ts.MakeNMNode("audit-node", "16", "64Gi", "14", "60Gi"), ts.MakeCNR("audit-node", "4", "8Gi")
	nmStatus, cnrStatus := nm.Status, cnr.Status
	mustCreate(t, node, nm, cnr)
	nm.Status, cnr.Status = nmStatus, cnrStatus
	for _, o := range []client.Object{nm, cnr} {
		if err := env.Client.Status().Update(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "audit"}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:v1"}}}}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	jobTemplate := *template.DeepCopy()
	jobTemplate.Spec.RestartPolicy = corev1.RestartPolicyNever
	owners := []client.Object{
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"}, Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: template}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"}, Spec: appsv1.DeploymentSpec{Selector: selector, Template: template}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"}, Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"}, Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template}},
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "audit"}, Spec: batchv1.JobSpec{Template: jobTemplate}},
	}
	mustCreate(t, owners...)
	mustCreate(t, ts.MakePDB(ns, "audit", 1, "app", "audit"))

	// A gang of one: Pending, PreScheduling with its member, Pending again without it; an
	// event on every change.
	pg := ts.MakePodGroup(ns, "audit-gang", 1)
	mustCreate(t, pg)
	phaseIs := func(want v1alpha1.PodGroupPhase) func() (bool, string) {
		return func() (bool, string) {
			got := &v1alpha1.PodGroup{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pg), got); err != nil {
				return false, err.Error()
			}
			return got.Status.Phase == want, string(got.Status.Phase)
		}
	}
	waitFor(t, "the gang is Pending", phaseIs(v1alpha1.PodGroupPending))
	member := ts.MakePod(ns, "member", ts.InGroup("audit-gang"))
	mustCreate(t, member)
	waitFor(t, "the gang is PreScheduling", phaseIs(v1alpha1.PodGroupPreScheduling))
	mustDelete(t, member)
	waitFor(t, "the gang is Pending again", phaseIs(v1alpha1.PodGroupPending))
	waitFor(t, "the gang's events are recorded", func() (bool, string) {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return len(list.Items) >= 3, fmt.Sprintf("%d events", len(list.Items))
	})

	mvt := ts.MakeMovement("audit-movement", v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "audit"}, "audit-node", 1)
	mustCreate(t, mvt)
	waitFor(t, "the movement's status is written", func() (bool, string) {
		got := &v1alpha1.Movement{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mvt), got); err != nil {
			return false, err.Error()
		}
		return len(got.Status.NotifiedSchedulers) > 0, fmt.Sprintf("%+v", got.Status)
	})

	// A reservation that nothing matches: Reserved, Expired after a second, deleted by the
	// GC a grace second later.
	rsv := ts.MakeReservation(ns, "audit-hold", "audit-node", "1", "1Gi", "app", "nobody")
	rsv.Spec.TTLSeconds = ptr.To(int64(1))
	mustCreate(t, rsv)
	waitFor(t, "the expired reservation is collected", func() (bool, string) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(rsv), &v1alpha1.Reservation{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	// A deleted pod that asked to keep its place: the leader creates its Reservation.
	keeper := ts.MakePod(ns, "keeper", ts.OnNode("audit-node"), ts.Requests("1", "1Gi"),
		ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"), ts.WithLabels("app", "audit"),
		ts.OwnedBy("ReplicaSet", "audit", string(owners[0].GetUID())))
	mustCreate(t, keeper)
	waitFor(t, "the cache holds the pod that keeps its place", func() (bool, string) {
		info, ok := op.Cache.NodeInfo("audit-node")
		return ok && len(info.Pods) == 1, "not yet"
	})
	mustDelete(t, keeper)
	waitFor(t, "the leader creates the Reservation that keeps the pod's place", func() (bool, string) {
		list := &v1alpha1.ReservationList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, r := range list.Items {
			if r.Annotations[v1alpha1.ReplacesPodAnnotation] == "keeper" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d reservations", len(list.Items))
	})

	// Updates and deletes of every kind the feeds watch.
	for _, o := range append([]client.Object{node, nm, cnr, pg, mvt}, owners...) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		o.SetAnnotations(map[string]string{"audit": "updated"})
		if err := env.Client.Update(ctx, o); err != nil {
			t.Fatalf("updating %T %s: %v", o, o.GetName(), err)
		}
	}
	mustDelete(t, append([]client.Object{node, nm, cnr, pg, mvt, ts.MakePDB(ns, "audit", 1)}, owners...)...)

	if op.Debug == nil {
		t.Fatal("the debug server is off")
	}
	waitFor(t, "the cache equals the API", func() (bool, string) {
		diffs, err := op.Debug.Compare(ctx)
		if err != nil {
			return false, err.Error()
		}
		return len(diffs) == 0, fmt.Sprintf("%+v", diffs)
	})
	scrapeMetrics(t, ns, metricsURL)
}

// scrapeMetrics scrapes metricsURL as a service account bound to multicache-metrics-reader
// (200) and as one that is not (403): the operator asks the API server who the caller is
// and whether it may get /metrics.
func scrapeMetrics(t *testing.T, ns, metricsURL string) {
	t.Helper()
	ctx := context.Background()
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		mustCreate(t, sa)
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}
		if err := env.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	mustCreate(t, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "multicache-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
	})
	scraper, stranger := token("scraper"), token("stranger")
	waitFor(t, "the scraper may get /metrics", func() (bool, string) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "system:serviceaccount:" + ns + ":scraper", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
		}}
		if err := env.Client.Create(ctx, sar); err != nil {
			return false, err.Error()
		}
		return sar.Status.Allowed, sar.Status.Reason
	})
	// The operator serves a self-signed certificate unless given one (--metrics-cert-path).
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test of authorization, not of the certificate
	get := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, metricsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatalf("scraping %s: %v", metricsURL, err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body)
	}
	if code, body := get(scraper); code != http.StatusOK {
		t.Errorf("the metrics reader got %d from /metrics: %.300s", code, body)
	}
	if code, _ := get(stranger); code != http.StatusForbidden {
		t.Errorf("a service account without multicache-metrics-reader got %d from /metrics, want 403", code)
	}
}

// mustCreate creates objs (without the builders' UIDs), deleting them when the test ends.
func mustCreate(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		o.SetUID("")
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}
}

// mustDelete deletes objs at once (no grace period).
func mustDelete(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Delete(context.Background(), o, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			t.Fatalf("deleting %T %s: %v", o, o.GetName(), err)
		}
	}
}
