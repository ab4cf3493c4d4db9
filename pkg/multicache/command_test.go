package multicache

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// nopStore is the smallest store: it handles nothing.
type nopStore struct{ name store.Name }

func (s nopStore) Name() store.Name                                 { return s.name }
func (nopStore) Len() int                                           { return 0 }
func (nopStore) Dump() any                                          { return nil }
func (nopStore) CheckInvariants() []error                           { return nil }
func (s nopStore) NewSnapshot(store.SnapshotOptions) store.Snapshot { return nopSnapshot{s.name} }
func (nopStore) UpdateSnapshot(store.Snapshot, int64)               {}

type nopSnapshot struct{ name store.Name }

func (s nopSnapshot) StoreName() store.Name { return s.name }

func nop(name store.Name) StoreFactory {
	return func(store.Handle) (store.Store, error) { return nopStore{name}, nil }
}

func TestCommand_RegisteredStoresAreKnownToStoresAndEnabledByDefault(t *testing.T) {
	cmd := NewCommand(WithStore("a", nop("a")), WithStore("b", nop("b")))
	opts, err := cmd.Options(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nodes", "podgroups", "pdbs", "movements", "reservations", "devices", "a", "b", "pods"}
	if !slices.Equal(opts.Stores(), want) {
		t.Errorf("default stores %v, want %v (registered ones before the PodStore)", opts.Stores(), want)
	}
	if opts, err = cmd.Options([]string{"--stores=b"}); err != nil || !slices.Equal(opts.Stores(), []string{"b"}) {
		t.Errorf("--stores=b: %v %v", opts.Stores(), err)
	}
	_, err = cmd.Options([]string{"--stores=c"})
	if err == nil || !strings.Contains(err.Error(), `unknown store "c"`) || !strings.Contains(err.Error(), "a, b, pods") {
		t.Errorf("--stores=c: %v, want the unknown store named and the known ones listed", err)
	}
}

func TestCommand_BadRegistrationsAreErrorsNamingWhatToFix(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  Option
		want string
	}{
		"taken name":   {WithStore("pods", nop("pods")), `store name "pods" is taken`},
		"invalid name": {WithStore("Zones_1", nop("Zones_1")), `store name "Zones_1"`},
		"empty name":   {WithStore("", nop("")), "a store needs a name"},
		"no factory":   {WithStore("zones", nil), `store "zones" has no factory`},
		"nil sibling":  {WithSibling(nil), "sibling 0 has no factory"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand(tc.opt)
			if _, err := cmd.Options(nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
			if code := cmd.Run(nil); code != exitBadFlags {
				t.Errorf("Run exit code %d, want %d", code, exitBadFlags)
			}
		})
	}
}

func TestCommand_FactoryErrorsStopTheStartNamingTheStore(t *testing.T) {
	for name, tc := range map[string]struct {
		opt  Option
		want string
	}{
		"factory fails": {WithStore("zones", func(store.Handle) (store.Store, error) { return nil, errors.New("no zone label") }),
			`building store "zones": no zone label`},
		"wrong name": {WithStore("zones", nop("zone")), `store registered as "zones" calls itself "zone"`},
		"sibling fails": {WithSibling(func(SiblingDeps) (Sibling, error) { return nil, errors.New("needs zones") }),
			"building sibling 0: needs zones"},
		"typed nil sibling": {WithSibling(func(SiblingDeps) (Sibling, error) { return (*idleSibling)(nil), nil }),
			"building sibling 0: the factory returned a nil *multicache.idleSibling; return nil, nil to stay off"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := NewCommand(tc.opt)
			opts, err := cmd.Options([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0"})
			if err != nil {
				t.Fatal(err)
			}
			opts.SetSkipControllerNameValidation(true)
			_, err = New(env.Config, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestCommand_ASiblingWithoutWorkStaysOff(t *testing.T) {
	var deps SiblingDeps
	called := false
	cmd := NewCommand(WithSibling(func(d SiblingDeps) (Sibling, error) {
		deps, called = d, d.Reader != nil && d.Assumer != nil && d.Manager != nil
		return nil, nil
	}))
	opts, err := cmd.Options([]string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--debug-bind-address=0"})
	if err != nil {
		t.Fatal(err)
	}
	opts.SetSkipControllerNameValidation(true)
	if _, err := New(env.Config, opts); err != nil || !called {
		t.Errorf("New: %v, factory called with the cache and the manager: %v", err, called)
	}
	// What the operator hands a sibling is the sealed Reader and Assumer, not the handler.
	checkSealed(t, deps.Reader, reflect.TypeFor[Reader]())
	checkSealed(t, deps.Assumer, reflect.TypeFor[Assumer]())
}

// idleSibling is a sibling that does nothing.
type idleSibling struct{}

func (*idleSibling) Start(ctx context.Context) error { <-ctx.Done(); return nil }
func (*idleSibling) NeedLeaderElection() bool        { return false }
