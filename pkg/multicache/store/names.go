package store

// Name identifies a store. The names are the values of the --stores flag and of the
// `store` label of the metrics, and the keys of the debug dump.
type Name string

// The built-in stores' names. A store registered out of tree takes another one.
const (
	NodeStoreName        Name = "nodes"
	PodGroupStoreName    Name = "podgroups"
	PDBStoreName         Name = "pdbs"
	MovementStoreName    Name = "movements"
	ReservationStoreName Name = "reservations"
	PodStoreName         Name = "pods"
)
