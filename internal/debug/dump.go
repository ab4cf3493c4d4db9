package debug

import (
	"encoding/json"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/pdbstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// Dump is the document /debug/cache serves (handler.WriteDump writes it), in the types the
// stores dump: what the kubectl plugin reads. A disabled store's part is empty.
type Dump struct {
	// Generation is the cache's generation when the dump started: events may have been
	// applied while it was written.
	Generation    int64  `json:"generation"`
	ComponentName string `json:"componentName"`
	SchedulerName string `json:"schedulerName"`
	// SubCluster is key=value when the cache holds one sub-cluster.
	SubCluster string `json:"subCluster,omitempty"`
	// Stores are the enabled stores in fan-out order.
	Stores       []string                                    `json:"stores"`
	Nodes        map[string]nodestore.NodeDump               `json:"nodes"`
	Pods         map[string]podstore.PodDump                 `json:"pods"`
	PodGroups    map[string]podgroupstore.GroupDump          `json:"podGroups"`
	PDBs         map[string]pdbstore.PDBDump                 `json:"pdbs"`
	Movements    map[string]movementstore.MovementDump       `json:"movements"`
	Reservations map[string]reservationstore.ReservationDump `json:"reservations"`
	Devices      devicestore.Dump                            `json:"devices"`
	// Extensions are the stores registered beyond the built-in ones, by name, as each
	// renders itself.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}
