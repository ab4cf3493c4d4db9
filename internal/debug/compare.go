package debug

import (
	"context"
	"net/http"

	"github.com/seed0f91f25e/multicache/internal/drift"
)

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	diffs, err := s.Compare(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, diffs)
}

// Compare lists, for every kind the cache watches, the objects on which the cache and the
// API (read through the uncached reader) disagree. Assumed pods the API has not reported yet
// are not differences.
func (s *Server) Compare(ctx context.Context) ([]drift.Difference, error) {
	return drift.Compare(ctx, s.handler, drift.APISource{Reader: s.api}, s.keep, s.Listings...)
}
