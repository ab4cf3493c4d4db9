package drift

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestMetadataStream_AsksForTheNextPageBeforeReadingThisOnesItems: the next page is asked
// for as soon as a protobuf page's continue token is read (the list's metadata comes before
// its items), so that the API server gathers it while this page is read and compared: the
// first object is handed out only once the second page was asked for. Every object is still
// read once, in order.
func TestMetadataStream_AsksForTheNextPageBeforeReadingThisOnesItems(t *testing.T) {
	inf := newFakeInformers()
	var want bytes.Buffer
	for i := range 5 {
		inf.add(t, ts.MakePod("ns", fmt.Sprintf("p%d", i), ts.OnNode("n"), ts.WithResourceVersion(fmt.Sprint(10+i))))
		fmt.Fprintf(&want, "ns/p%d@%d ", i, 10+i)
	}
	asked := make(chan struct{})
	var once sync.Once
	stream, _ := newMetadataStream(t, inf, 2, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("continue") != "" {
				once.Do(func() { close(asked) })
			}
			return rt.RoundTrip(req)
		})
	})
	var got bytes.Buffer
	err := stream.eachVersion(context.Background(), listingOf(t, stores.KindPod), func(key types.NamespacedName, version []byte) error {
		select {
		case <-asked:
		case <-time.After(time.Minute):
			return errors.New("the second page was not asked for before the first page's items were read")
		}
		fmt.Fprintf(&got, "%s@%s ", key, version)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("listed %q, want %q", got.String(), want.String())
	}
}

// TestMetadataStream_APageAskedForAndNotReadIsClosed: a listing that fails on a page (its
// callback's error) while the next page is on its way closes that page too, once it
// arrives: every body the API answered is closed.
func TestMetadataStream_APageAskedForAndNotReadIsClosed(t *testing.T) {
	inf := newFakeInformers()
	for i := range 5 {
		inf.add(t, ts.MakePod("ns", fmt.Sprintf("p%d", i), ts.OnNode("n"), ts.WithResourceVersion("1")))
	}
	var mu sync.Mutex
	opened, closed := 0, 0
	arrived := make(chan struct{})
	stream, _ := newMetadataStream(t, inf, 2, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			opened++
			mu.Unlock()
			resp.Body = &closeCounter{ReadCloser: resp.Body, close: func() { mu.Lock(); closed++; mu.Unlock() }}
			if req.URL.Query().Get("continue") != "" {
				close(arrived)
			}
			return resp, nil
		})
	})
	stop := errors.New("stop")
	err := stream.eachVersion(context.Background(), listingOf(t, stores.KindPod), func(types.NamespacedName, []byte) error {
		select { // the second page answered before the first's first item fails
		case <-arrived:
		case <-time.After(time.Minute):
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("error %v, want the callback's", err)
	}
	for wait := 0; ; wait++ {
		mu.Lock()
		o, c := opened, closed
		mu.Unlock()
		if o == 2 && c == 2 {
			return
		}
		if wait == 6000 {
			t.Fatalf("%d pages answered, %d closed; want 2 and 2", o, c)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type closeCounter struct {
	io.ReadCloser
	once  sync.Once
	close func()
}

func (c *closeCounter) Close() error {
	c.once.Do(c.close)
	return c.ReadCloser.Close()
}
