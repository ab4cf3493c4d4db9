package debug

import (
	"context"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/drift"
)

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	diffs, err := s.Compare(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	if diffs == nil {
		diffs = []drift.Difference{} // a list, also when empty: readers expect one
	}
	writeJSON(w, http.StatusOK, diffs)
}

// Compare lists, for every kind the cache watches, the objects on which the cache and the
// API disagree: the API as Source reads it when set (operator.New sets, for a whole replica,
// a drift.MetadataStream of the metadata lists; for a shard, its nodes' pods), else through
// the uncached reader. Assumed pods the API has not reported yet are not differences.
func (s *Server) Compare(ctx context.Context) ([]drift.Difference, error) {
	src := drift.APISource{Reader: s.api}
	if c, ok := s.api.(client.Client); ok && s.keep == nil {
		// Keys and versions are all the comparison reads (a sub-cluster's keep reads a
		// pod's node, so it lists whole objects).
		src.MetadataScheme = c.Scheme()
	}
	if s.Source != nil {
		return drift.Compare(ctx, s.handler, s.Source, s.keep, s.Listings...)
	}
	return drift.Compare(ctx, s.handler, src, s.keep, s.Listings...)
}
