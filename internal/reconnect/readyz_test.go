package reconnect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestReadyz_ReadyUnlessUnreachableOrNotReady: /readyz answering 500 or 503 (not ready) or
// not at all is an error; 200, and a 403 from a cluster that closed the endpoint, are not.
func TestReadyz_ReadyUnlessUnreachableOrNotReady(t *testing.T) {
	for _, tc := range []struct {
		code      int
		wantReady bool
	}{{http.StatusOK, true}, {http.StatusForbidden, true}, {http.StatusInternalServerError, false}, {http.StatusServiceUnavailable, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" {
				t.Errorf("asked %s, want /readyz", r.URL.Path)
			}
			w.WriteHeader(tc.code)
		}))
		ready, err := Readyz(&rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if err := ready(context.Background()); (err == nil) != tc.wantReady {
			t.Errorf("/readyz answering %d: %v, want ready %v", tc.code, err, tc.wantReady)
		}
		srv.Close()
		if err := ready(context.Background()); err == nil {
			t.Errorf("a closed server (after answering %d) counts as ready", tc.code)
		}
	}
}
