package debug

import (
	"context"
	"net/http"
	"time"

	"github.com/seed0f91f25e/multicache/internal/drift"
)

// compare answers the differences Compare finds. One comparison runs at a time (each lists
// the whole cluster from the API server); another client meanwhile is answered 429 with a
// Retry-After, as a dump's is. The write timeout is counted from the end of the listing,
// however long it took.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !s.compares.take(w, start) {
		return
	}
	diffs, err := func() ([]drift.Difference, error) {
		defer s.compares.done(start)
		return s.Compare(r.Context())
	}()
	// Only a writer without deadlines (a test's recorder) refuses.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.timeouts.write))
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
	src := s.Source
	if src == nil {
		src = drift.APISource{Reader: s.api}
	}
	return drift.Compare(ctx, s.handler, src, s.keep, s.Listings...)
}
