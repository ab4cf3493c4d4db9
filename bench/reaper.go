package bench

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// The shape of the reaper benchmark.
const (
	// DuePerTick is how many reservations fall due at every tick.
	DuePerTick = 100
	// ReservationsPerNode is how many reservations each node holds. It is kept constant as n
	// grows (so the number of nodes grows with n): a node holds a bounded number of
	// reservations, and the NodeStore's per-node work must not be mistaken for the reaper's.
	ReservationsPerNode = 20
	// Tick is how far the clock moves between two ticks.
	Tick = time.Second
	// ReaperTicks is how many ticks the reaper table times per round.
	ReaperTicks = 2_000
)

// ReaperSizes are the numbers of reservations the reaper is measured with.
var ReaperSizes = []int{10_000, 100_000, 1_000_000}

// reaperStart is the fake clock's start.
var reaperStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ReaperFixture is a multicache (every store, as by default, on a fake clock) holding N
// Reserved reservations on N/ReservationsPerNode nodes, added through the handler as the
// reconciler adds them, each with its placeholder pod charged on its node. Reservation i
// has ttlSeconds 1+i/DuePerTick, so exactly DuePerTick fall due at each Tick of the clock.
// After a tick, the reservations it expired are deleted and created again with a TTL of
// N/DuePerTick ticks: the store keeps N reservations, N Reserved, and every later tick
// again finds exactly DuePerTick due.
type ReaperFixture struct {
	// H is the handler.
	H *handler.Handler
	// Clock is its clock.
	Clock *clocktesting.FakeClock
	// N is the number of reservations.
	N int
	// Nodes is the number of nodes they are spread over.
	Nodes int
	// GC keeps collections out of the timed ticks.
	GC GCControl

	rsvs []*v1alpha1.Reservation
}

// NewReaperFixture builds a ReaperFixture of n reservations. Its benchmark pauses the
// collector (see GCControl) when pauseGC is set.
func NewReaperFixture(n int, pauseGC bool) (*ReaperFixture, error) {
	clk := clocktesting.NewFakeClock(reaperStart)
	f := &ReaperFixture{
		H:     NewMulticache(clk),
		Clock: clk,
		N:     n,
		Nodes: (n + ReservationsPerNode - 1) / ReservationsPerNode,
		GC:    GCControl{Paused: pauseGC},
		rsvs:  make([]*v1alpha1.Reservation, n),
	}
	for i := 0; i < f.Nodes; i++ {
		if err := f.H.Add(MakeNode(i)); err != nil {
			return nil, err
		}
	}
	for i := range f.rsvs {
		if err := f.add(i, int64(1+i/DuePerTick)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// add creates reservation i with the given TTL, charged from now.
func (f *ReaperFixture) add(i int, ttlSeconds int64) error {
	r := makeReservation(i, fmt.Sprintf("node-%05d", i%f.Nodes), ttlSeconds, f.Clock.Now())
	if err := f.H.Add(r); err != nil {
		return err
	}
	f.rsvs[i] = r
	return nil
}

// Recycle deletes the reservations a tick expired and creates them again at the back of
// the queue: due N/DuePerTick ticks from now, after every other one.
func (f *ReaperFixture) Recycle(expired []reservationstore.Transition) error {
	for _, t := range expired {
		i, err := strconv.Atoi(t.Key.Name[len("rsv-"):])
		if err != nil {
			return fmt.Errorf("reservation %s: %w", t.Key, err)
		}
		if err := f.H.Delete(f.rsvs[i]); err != nil {
			return err
		}
		if err := f.add(i, int64(f.N/DuePerTick)); err != nil {
			return err
		}
	}
	return nil
}

// ReaperTick is the benchmark body of one reaper tick: untimed, the previous tick's
// expired reservations are recycled (and a collection runs, when the fixture's GCControl
// calls for one) and the clock moves one Tick; timed,
// Handler.ReapReservations expires the DuePerTick reservations now due (releasing their
// placeholders) and nothing else.
func ReaperTick(f *ReaperFixture) func(b *testing.B) {
	return func(b *testing.B) {
		b.StopTimer()
		f.GC.Start(b)
		var expired []reservationstore.Transition
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fatalIf(b, f.Recycle(expired))
			f.GC.Between()
			f.Clock.Step(Tick)
			b.StartTimer()
			expired = f.H.ReapReservations()
			if len(expired) != DuePerTick {
				b.Fatalf("n=%d: a tick expired %d reservations, want %d", f.N, len(expired), DuePerTick)
			}
		}
		b.StopTimer()
		fatalIf(b, f.Recycle(expired))
	}
}

// makeReservation returns reservation i on node: 100m and 128Mi for the pods labelled
// app=reserved of its namespace, charged at now for ttlSeconds.
func makeReservation(i int, node string, ttlSeconds int64, now time.Time) *v1alpha1.Reservation {
	name := fmt.Sprintf("rsv-%07d", i)
	return &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         fmt.Sprintf("ns-%02d", i%50),
			Name:              name,
			UID:               types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now),
		},
		Spec: v1alpha1.ReservationSpec{
			NodeName: node,
			Resources: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(100, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(128<<20, resource.BinarySI),
			},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "reserved"}},
			TTLSeconds:  &ttlSeconds,
		},
	}
}
