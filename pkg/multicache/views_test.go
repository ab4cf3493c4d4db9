package multicache

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// TestViews_CarryEveryFieldOfTheStoresViews: the public views are converted from the
// stores' own; a field added to a store's view must be added to the public one (and to its
// conversion), or a reader silently misses it.
func TestViews_CarryEveryFieldOfTheStoresViews(t *testing.T) {
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[PodGroup](), reflect.TypeFor[podgroupstore.GroupStatus]()},
		{reflect.TypeFor[PodGroupCounts](), reflect.TypeFor[podgroupstore.Counts]()},
		{reflect.TypeFor[PDB](), reflect.TypeFor[pdbstore.PDBView]()},
		{reflect.TypeFor[Movement](), reflect.TypeFor[movementstore.MovementView]()},
		{reflect.TypeFor[MovementOwner](), reflect.TypeFor[movementstore.OwnerSuggestions]()},
		{reflect.TypeFor[MovementNode](), reflect.TypeFor[movementstore.NodeSuggestion]()},
		{reflect.TypeFor[Reservation](), reflect.TypeFor[reservationstore.View]()},
		{reflect.TypeFor[DeviceCounts](), reflect.TypeFor[devicestore.Counts]()},
		{reflect.TypeFor[PoolDevices](), reflect.TypeFor[devicestore.PoolDevices]()},
		{reflect.TypeFor[NodeDevices](), reflect.TypeFor[devicestore.NodeDevices]()},
	} {
		public, internal := fieldNames(pair[0]), fieldNames(pair[1])
		for i, name := range public {
			if name == "DeviceCounts" { // the embedded counts, named for the package
				public[i] = "Counts"
			}
		}
		if !reflect.DeepEqual(public, internal) {
			t.Errorf("%s has fields %v, %s has %v", pair[0], public, pair[1], internal)
		}
	}
}

// TestViews_ConversionsCopyEveryField: a view with every field set converts into a public
// one with every field set to the same value.
func TestViews_ConversionsCopyEveryField(t *testing.T) {
	at := time.Unix(100, 0)
	key := types.NamespacedName{Namespace: "ns", Name: "x"}
	g := podGroupOf(podgroupstore.GroupStatus{Key: key, Source: "native", PodGroup: &v1alpha1.PodGroup{},
		Counts: podgroupstore.Counts{Pending: 1, Scheduled: 2, Running: 3, Succeeded: 4, Failed: 5}, Members: []types.NamespacedName{key},
		MinMemberReached: true, ScheduleStartTime: at, TimeoutAt: at})
	p := pdbOf(pdbstore.PDBView{Key: key, PDB: nil, AllowedDisruptions: 1, Owners: nil})
	m := movementOf(movementstore.MovementView{Name: "m", Movement: &v1alpha1.Movement{}, Owners: []movementstore.OwnerSuggestions{{
		Owner: v1alpha1.OwnerInfo{Name: "o"}, Nodes: []movementstore.NodeSuggestion{{Node: "n", Desired: 2, Actual: []v1alpha1.TaskInfo{{Name: "p"}}}}}}})
	r := reservationOf(reservationstore.View{Key: key, Reservation: &v1alpha1.Reservation{}, Phase: "Reserved", Node: "n", ReservedAt: at,
		ExpiresAt: at, Owner: &v1alpha1.PodReference{Name: "p"}, OwnerAssumed: true, Provisional: true, Why: "owner wants 2", AwaitingNode: "n9"})
	for name, v := range map[string]any{"PodGroup": g, "Counts": g.Counts, "Movement": m, "MovementOwner": m.Owners[0],
		"MovementNode": m.Owners[0].Nodes[0], "Reservation": r} {
		rv := reflect.ValueOf(v)
		for i := range rv.NumField() {
			if rv.Field(i).IsZero() {
				t.Errorf("%s.%s was not copied", name, rv.Type().Field(i).Name)
			}
		}
	}
	if p.Key != key || p.AllowedDisruptions != 1 {
		t.Errorf("PDB %+v", p)
	}
	if g.Phase(at) != (podgroupstore.GroupStatus{PodGroup: g.PodGroup, Counts: podgroupstore.Counts(g.Counts), TimeoutAt: at}).Phase(at) {
		t.Error("PodGroup.Phase differs from the store's")
	}
}

// TestViews_NodeDevicesCopiesEveryCount: the public node devices carry the store's counts,
// per class and per pool, field by field.
func TestViews_NodeDevicesCopiesEveryCount(t *testing.T) {
	c := devicestore.Counts{Total: 4, Allocated: 3, Free: 1, Assumed: 2}
	v := nodeDevicesOf(devicestore.NodeDevices{Counts: c, ByClass: map[string]devicestore.Counts{"gpu": c},
		ByPool: map[string]devicestore.PoolDevices{"d/p": {Counts: c, Generation: 7, Shared: 1, Incomplete: true, Invalid: true}}})
	want := DeviceCounts{Total: 4, Allocated: 3, Free: 1, Assumed: 2}
	if v.DeviceCounts != want || v.ByClass["gpu"] != want {
		t.Errorf("counts %+v, by class %+v, want %+v", v.DeviceCounts, v.ByClass, want)
	}
	if p := v.ByPool["d/p"]; p != (PoolDevices{DeviceCounts: want, Generation: 7, Shared: 1, Incomplete: true, Invalid: true}) {
		t.Errorf("pool %+v", p)
	}
}

func fieldNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if t.Field(i).IsExported() { // unexported fields are the stores' bookkeeping
			out = append(out, t.Field(i).Name)
		}
	}
	return out
}
