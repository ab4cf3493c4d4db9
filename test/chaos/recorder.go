package chaos

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The recorder watches Pods, Reservations, PodGroups and Leases for the whole run and keeps
// every version it saw, stamped with its resourceVersion (etcd's revision, one order for
// all kinds) and the time it arrived. Status writes are the versions whose status changed;
// the API's state at a revision is the last version at or before it. A watch that breaks
// resumes; a 410 relists, and what changed in between is seen once, at the relist.

// Version is what every recorded version carries: its revision, when it arrived, whether
// it is a delete, and whether a relist found it (rather than a watch event).
type Version struct {
	RV      int64
	At      time.Time
	Deleted bool
	Relist  bool
}

// PodRec is one version of a pod.
type PodRec struct {
	Version
	Key    string
	Node   string
	Phase  corev1.PodPhase
	Labels map[string]string
	// Landed is when the API put it on its node (PodScheduled, else creation); zero unbound.
	Landed time.Time
}

// Placed reports whether the version is on a node and not failed (what a pod group counts
// as placed).
func (p *PodRec) Placed() bool {
	return !p.Deleted && p.Node != "" && p.Phase != corev1.PodFailed
}

// RsvRec is one version of a reservation.
type RsvRec struct {
	Version
	Status v1alpha1.ReservationStatus
}

// RsvHistory is every version of one reservation (one UID).
type RsvHistory struct {
	Key string
	UID types.UID
	// Since is from when a landed pod may consume it: its creation, or the deletion of
	// the pod whose place it keeps (ReplacesSinceAnnotation), when earlier.
	Since    time.Time
	Node     string
	TTL      *int64
	Selector labels.Selector
	Versions []RsvRec
}

// GroupRec is one version of a pod group.
type GroupRec struct {
	Version
	Status v1alpha1.PodGroupStatus
}

// GroupHistory is every version of one pod group (one UID).
type GroupHistory struct {
	Key       string
	Created   time.Time
	MinMember int32
	Timeout   *int32
	Versions  []GroupRec
}

// LeaseRec is one version of the leader-election lease.
type LeaseRec struct {
	RV     int64
	Holder string
}

// Recorder keeps the histories.
type Recorder struct {
	leaseName string

	mu       sync.Mutex
	pods     map[types.UID][]PodRec
	podUID   map[string]types.UID
	rsvs     map[types.UID]*RsvHistory
	rsvUID   map[string]types.UID
	groups   map[types.UID]*GroupHistory
	groupUID map[string]types.UID
	leases   []LeaseRec
	relists  map[string]int
}

// NewRecorder returns an empty recorder; leaseName is the lease it follows.
func NewRecorder(leaseName string) *Recorder {
	return &Recorder{
		leaseName: leaseName,
		pods:      map[types.UID][]PodRec{}, podUID: map[string]types.UID{},
		rsvs: map[types.UID]*RsvHistory{}, rsvUID: map[string]types.UID{},
		groups: map[types.UID]*GroupHistory{}, groupUID: map[string]types.UID{}, relists: map[string]int{},
	}
}

// Start follows every kind until ctx ends; it returns once each was listed once.
func (r *Recorder) Start(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, namespace, leaseNamespace string) error {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	kinds := []struct {
		name string
		list func() client.ObjectList
		ns   string
	}{
		{"pods", func() client.ObjectList { return &corev1.PodList{} }, namespace},
		{"reservations", func() client.ObjectList { return &v1alpha1.ReservationList{} }, namespace},
		{"podgroups", func() client.ObjectList { return &v1alpha1.PodGroupList{} }, namespace},
		{"leases", func() client.ObjectList { return &coordinationv1.LeaseList{} }, leaseNamespace},
	}
	var listed sync.WaitGroup
	for _, k := range kinds {
		listed.Add(1)
		go r.follow(ctx, c, k.name, k.list, k.ns, listed.Done)
	}
	done := make(chan struct{})
	go func() { listed.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// follow lists a kind, then watches it from the list's revision, resuming from the last
// revision seen when the watch breaks (at once: no backoff, an API server restart must not
// leave a gap) and listing again only on 410 Gone. What a relist finds changed or gone is
// recorded as such (Relist).
func (r *Recorder) follow(ctx context.Context, c client.WithWatch, kind string, list func() client.ObjectList, ns string, listed func()) {
	known := map[string]string{} // key -> resourceVersion
	rv, first := "", true
	keyOf := func(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
	for ctx.Err() == nil {
		if rv == "" {
			l := list()
			if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			items, _ := apimeta.ExtractList(l)
			seen := map[string]bool{}
			for _, it := range items {
				o := it.(client.Object)
				key := keyOf(o)
				seen[key] = true
				if known[key] != o.GetResourceVersion() {
					r.record(o, false, !first)
					known[key] = o.GetResourceVersion()
				}
			}
			listRV := l.(metav1.ListInterface).GetResourceVersion()
			n, _ := strconv.ParseInt(listRV, 10, 64)
			for key := range known {
				if !seen[key] {
					r.goneAtRelist(kind, key, n)
					delete(known, key)
				}
			}
			if first {
				listed()
				first = false
			} else {
				r.mu.Lock()
				r.relists[kind]++
				r.mu.Unlock()
			}
			rv = listRV
		}
		w, err := c.Watch(ctx, list(), &client.ListOptions{Namespace: ns,
			Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				o, ok := ev.Object.(client.Object)
				if !ok {
					continue
				}
				deleted := ev.Type == watch.Deleted
				r.record(o, deleted, false)
				if deleted {
					delete(known, keyOf(o))
				} else {
					known[keyOf(o)] = o.GetResourceVersion()
				}
				rv = o.GetResourceVersion()
			case watch.Bookmark:
				if o, ok := ev.Object.(client.Object); ok {
					rv = o.GetResourceVersion()
				}
			case watch.Error:
				if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					rv = ""
				}
			}
		}
		w.Stop()
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *Recorder) record(o client.Object, deleted, relist bool) {
	rv, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	v := Version{RV: rv, At: time.Now(), Deleted: deleted, Relist: relist}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch obj := o.(type) {
	case *corev1.Pod:
		rec := PodRec{Version: v, Key: obj.Namespace + "/" + obj.Name, Node: obj.Spec.NodeName, Phase: obj.Status.Phase, Labels: obj.Labels}
		if obj.Spec.NodeName != "" {
			rec.Landed = obj.CreationTimestamp.Time
			for _, c := range obj.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
					rec.Landed = c.LastTransitionTime.Time
				}
			}
		}
		r.pods[obj.UID] = append(r.pods[obj.UID], rec)
		r.podUID[rec.Key] = obj.UID
	case *v1alpha1.Reservation:
		h := r.rsvs[obj.UID]
		if h == nil {
			h = &RsvHistory{Key: obj.Namespace + "/" + obj.Name, UID: obj.UID, Since: obj.CreationTimestamp.Time}
			if t, err := time.Parse(time.RFC3339, obj.Annotations[v1alpha1.ReplacesSinceAnnotation]); err == nil && t.Before(h.Since) {
				h.Since = t
			}
			r.rsvs[obj.UID] = h
		}
		h.Node, h.TTL = obj.Spec.NodeName, obj.Spec.TTLSeconds
		if sel, err := metav1.LabelSelectorAsSelector(obj.Spec.PodSelector); err == nil {
			h.Selector = sel
		}
		h.Versions = append(h.Versions, RsvRec{Version: v, Status: *obj.Status.DeepCopy()})
		r.rsvUID[h.Key] = obj.UID
	case *v1alpha1.PodGroup:
		h := r.groups[obj.UID]
		if h == nil {
			h = &GroupHistory{Key: obj.Namespace + "/" + obj.Name, Created: obj.CreationTimestamp.Time}
			r.groups[obj.UID] = h
		}
		h.MinMember, h.Timeout = obj.Spec.MinMember, obj.Spec.ScheduleTimeoutSeconds
		h.Versions = append(h.Versions, GroupRec{Version: v, Status: *obj.Status.DeepCopy()})
		r.groupUID[h.Key] = obj.UID
	case *coordinationv1.Lease:
		if obj.Name != r.leaseName || deleted {
			return
		}
		holder := ""
		if obj.Spec.HolderIdentity != nil {
			holder = *obj.Spec.HolderIdentity
		}
		r.leases = append(r.leases, LeaseRec{RV: rv, Holder: holder})
	}
}

// goneAtRelist records a delete the watch missed: the object was absent from a relist.
func (r *Recorder) goneAtRelist(kind, key string, rv int64) {
	gone := Version{RV: rv, At: time.Now(), Deleted: true, Relist: true}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch kind {
	case "pods":
		if vs := r.pods[r.podUID[key]]; len(vs) > 0 && !vs[len(vs)-1].Deleted {
			last := vs[len(vs)-1]
			last.Version = gone
			r.pods[r.podUID[key]] = append(vs, last)
		}
	case "reservations":
		if h := r.rsvs[r.rsvUID[key]]; h != nil && !h.Versions[len(h.Versions)-1].Deleted {
			last := h.Versions[len(h.Versions)-1]
			last.Version = gone
			h.Versions = append(h.Versions, last)
		}
	case "podgroups":
		if h := r.groups[r.groupUID[key]]; h != nil && !h.Versions[len(h.Versions)-1].Deleted {
			last := h.Versions[len(h.Versions)-1]
			last.Version = gone
			h.Versions = append(h.Versions, last)
		}
	}
}

// ReservationStatus returns the last status seen of a reservation by key.
func (r *Recorder) ReservationStatus(key string) (v1alpha1.ReservationStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.rsvUID[key]
	if !ok {
		return v1alpha1.ReservationStatus{}, false
	}
	h := r.rsvs[uid]
	last := h.Versions[len(h.Versions)-1]
	return last.Status, !last.Deleted
}

// Relists returns how many times each kind was listed again after the first list.
func (r *Recorder) Relists() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.relists)
}

// History is a copy of everything recorded, for the checks.
type History struct {
	Pods   map[types.UID][]PodRec
	Rsvs   map[types.UID]*RsvHistory
	Groups map[types.UID]*GroupHistory
	Leases []LeaseRec
}

// History copies the histories (the slices are shared: versions are only appended).
func (r *Recorder) History() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := &History{Pods: map[types.UID][]PodRec{}, Rsvs: map[types.UID]*RsvHistory{}, Groups: map[types.UID]*GroupHistory{},
		Leases: append([]LeaseRec(nil), r.leases...)}
	for k, v := range r.pods {
		h.Pods[k] = v[:len(v):len(v)]
	}
	for k, v := range r.rsvs {
		c := *v
		c.Versions = v.Versions[:len(v.Versions):len(v.Versions)]
		h.Rsvs[k] = &c
	}
	for k, v := range r.groups {
		c := *v
		c.Versions = v.Versions[:len(v.Versions):len(v.Versions)]
		h.Groups[k] = &c
	}
	return h
}

// PodAt returns the version of a pod in force at revision rv (false: it did not exist).
func (h *History) PodAt(uid types.UID, rv int64) (PodRec, bool) {
	var out PodRec
	found := false
	for _, v := range h.Pods[uid] {
		if v.RV > rv {
			break
		}
		out, found = v, true
	}
	return out, found && !out.Deleted
}

// LastPod returns the last version of the newest pod of that namespace/name.
func (h *History) LastPod(key string) (PodRec, bool) {
	var best PodRec
	found := false
	for _, vs := range h.Pods {
		if len(vs) == 0 || vs[0].Key != key {
			continue
		}
		if last := vs[len(vs)-1]; !found || last.RV > best.RV {
			best, found = last, true
		}
	}
	return best, found
}

func (p PodRec) String() string {
	if p.Deleted {
		return fmt.Sprintf("%s deleted at revision %d (was on %q)", p.Key, p.RV, p.Node)
	}
	return fmt.Sprintf("%s on %q, %s, landed %s (revision %d)", p.Key, p.Node, orNone(p.Phase), p.Landed.Format(time.TimeOnly), p.RV)
}
