package drift

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// compactingTransport compacts etcd past every revision read so far before the first
// `expire` requests for a next page of pods: the listing's continue token then names a
// compacted revision, which the API server answers 410 Gone.
type compactingTransport struct {
	rt   http.RoundTripper
	etcd *ts.Etcd
	t    *testing.T

	mu         sync.Mutex
	expire     int
	firstPages int // requests of pods without a continue token
}

func (c *compactingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path == "/api/v1/pods" {
		c.mu.Lock()
		if req.URL.Query().Get("continue") == "" {
			c.firstPages++
		} else if c.expire > 0 {
			c.expire--
			rev, err := c.etcd.Put(req.Context(), "/multicache-test/compaction", "x")
			if err == nil {
				err = c.etcd.Compact(req.Context(), rev)
			}
			if err != nil {
				c.t.Errorf("compacting etcd: %v", err)
			}
		}
		c.mu.Unlock()
	}
	return c.rt.RoundTrip(req)
}

// TestCompare_AListingWhoseContinueTokenExpiresIsListedAgain: through a real API server
// (its watch cache off, so that every page is read from etcd, where compaction expires
// continue tokens), a pods listing in pages of 2 whose continue token expires once is listed
// again from its start and compared as if nothing happened; one that expires again fails
// the comparison with an error that names the kind, says it expired twice and to retry.
func TestCompare_AListingWhoseContinueTokenExpiresIsListedAgain(t *testing.T) {
	t.Parallel() // its own control plane: the wait for it overlaps the other e2e test's
	env := ts.StartForTest(t, ts.StartOptions{APIServerArgs: map[string]string{"watch-cache": "false"}})
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "expiry"}}); err != nil {
		t.Fatal(err)
	}
	h := newCache(t)
	var created []*corev1.Pod
	for i := range 7 {
		pod := ts.MakePod("expiry", fmt.Sprintf("p%d", i), ts.OnNode("n0"), ts.Requests("1m", "1Mi"))
		pod.UID = ""
		if err := env.Client.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		created = append(created, pod)
	}
	// The cache holds p0 stale and lacks p6; the others as the API does.
	for i, pod := range created[:6] {
		cached := pod.DeepCopy()
		if i == 0 {
			cached.ResourceVersion = "1"
		}
		if err := h.Add(cached); err != nil {
			t.Fatal(err)
		}
	}
	want := []Difference{
		{Kind: stores.KindPod, Key: "expiry/p0", Problem: StaleInCache, CacheVersion: "1", APIVersion: created[0].ResourceVersion},
		{Kind: stores.KindPod, Key: "expiry/p6", Problem: MissingFromCache, APIVersion: created[6].ResourceVersion},
	}

	hc, mapper := clientAndMapper(t, env.Config)
	compacting := &compactingTransport{rt: hc.Transport, etcd: env.Etcd(), t: t}
	stream, err := NewMetadataStream(env.Config, &http.Client{Transport: compacting}, env.Scheme, mapper,
		APISource{Reader: env.Client, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	pods := []Listing{listingOf(t, stores.KindPod)}

	compacting.expire = 1
	diffs, err := Compare(ctx, h, stream, nil, pods...)
	if err != nil {
		t.Fatalf("a listing that expired once: %v", err)
	}
	if fmt.Sprint(diffs) != fmt.Sprint(want) || compacting.firstPages != 2 || compacting.expire != 0 {
		t.Errorf("a listing that expired once: listed from its start %d times (compactions left %d), differences\n%v\nwant 2 times and\n%v",
			compacting.firstPages, compacting.expire, diffs, want)
	}

	compacting.expire, compacting.firstPages = 2, 0
	_, err = Compare(ctx, h, stream, nil, pods...)
	if err == nil || !expired(err) || !strings.Contains(err.Error(), "listing of Pod expired twice") || !strings.Contains(err.Error(), "retry the comparison") {
		t.Fatalf("a listing that expired twice: %v; want a 410 that names the kind, says it expired twice and to retry", err)
	}
	if compacting.firstPages != 2 {
		t.Errorf("a listing that expired twice was listed from its start %d times, want 2", compacting.firstPages)
	}
}
