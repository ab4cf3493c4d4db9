package operator

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSiblings_WritesAndEventsThroughTheirDepsAreFenced: a sibling's Writer and Recorder on
// a standby send nothing to the API (the write is refused, the Event dropped); on the leader
// they do.
func TestSiblings_WritesAndEventsThroughTheirDepsAreFenced(t *testing.T) {
	ns := newNamespace(t)
	elect := func(deps *SiblingDeps) func(*Options) {
		return func(o *Options) {
			o.LeaderElect, o.LeaderElectionID, o.LeaderElectionNamespace = true, "lease-"+ns, ns
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = ptr.To(3*time.Second), ptr.To(2*time.Second), ptr.To(200*time.Millisecond)
			o.Siblings = append(o.Siblings, func(d SiblingDeps) (Sibling, error) { *deps = d; return nil, nil })
		}
	}
	var leading, standing SiblingDeps
	a := startOperator(t, elect(&leading))
	eventually(t, "a leads", func() (bool, string) { return elected(a), "not elected" })
	b := startOperator(t, elect(&standing))
	if elected(b) {
		t.Fatal("the standby leads")
	}

	write := func(d SiblingDeps, name string) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		d.Recorder.Eventf(cm, nil, "Normal", "Written", "Create", "by %s", name)
		return d.Writer.Create(ctx(), cm)
	}
	if err := write(standing, "by-the-standby"); err == nil || !strings.Contains(err.Error(), "not writing") {
		t.Errorf("the standby's write returned %v, want the fence's refusal", err)
	}
	if err := write(leading, "by-the-leader"); err != nil {
		t.Fatalf("the leader's write: %v", err)
	}
	regarding := func() map[string]bool {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range list.Items {
			names[e.Regarding.Name] = true
		}
		return names
	}
	eventually(t, "the leader's Event arrives", func() (bool, string) { return regarding()["by-the-leader"], "no Event" })
	time.Sleep(time.Second) // room for the standby's, recorded first
	if regarding()["by-the-standby"] {
		t.Errorf("the standby's Event was sent")
	}
	err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: "by-the-standby"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the standby's ConfigMap: %v, want it never written", err)
	}
}
