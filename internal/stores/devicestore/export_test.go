package devicestore

// CountAll counts the cluster's devices from the pools, as ClusterCounts did before it kept
// running totals: what the totals are compared with.
func (s *Store) CountAll() (Counts, map[string]Counts) { return s.countAll() }

// MiscountForTest puts one device too many in the kept totals, for the self-check's test.
func (s *Store) MiscountForTest() { s.totals.all.Total++ }
