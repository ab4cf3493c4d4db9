package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
)

// columns returns the cells of the row of out whose first cell is key.
func columns(t *testing.T, out, key string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == key {
			return f
		}
	}
	t.Fatalf("no row %s in:\n%s", key, out)
	return nil
}

// TestShowNodes_CountsTheReservationsNodeLists: the nodes table's RESERVATIONS is what
// `node NAME` lists, the Reserved and Matched reservations on the node (a Matched one is no
// longer charged, so the node's own dump does not name it); Expired ones do not count.
func TestShowNodes_CountsTheReservationsNodeLists(t *testing.T) {
	d := &debug.Dump{
		Nodes: map[string]nodestore.NodeDump{"node-a": {Reservations: []string{"ns/held"}}, "node-b": {}},
		Reservations: map[string]reservationstore.ReservationDump{
			"ns/held":    {Phase: v1alpha1.ReservationReserved, Node: "node-a"},
			"ns/matched": {Phase: v1alpha1.ReservationMatched, Node: "node-a"},
			"ns/expired": {Phase: v1alpha1.ReservationExpired, Node: "node-a"},
			"ns/other":   {Phase: v1alpha1.ReservationReserved, Node: "node-b"},
		},
	}
	var out bytes.Buffer
	if err := showNodes(&out, d); err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"node-a": "2", "node-b": "1"} {
		// NODE, 6 resource cells, PODS, RESERVATIONS.
		if got := columns(t, out.String(), node)[8]; got != want {
			t.Errorf("%s: RESERVATIONS %s, want %s:\n%s", node, got, want, out.String())
		}
	}
}

// TestShowReservations_AMatchedReservationDoesNotExpire: EXPIRES is "-" once Matched, as
// `kubectl get reservations` leaves it empty; a Reserved one shows its time left.
func TestShowReservations_AMatchedReservationDoesNotExpire(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := now.Add(8 * time.Minute)
	d := &debug.Dump{Reservations: map[string]reservationstore.ReservationDump{
		"ns/matched":  {Phase: v1alpha1.ReservationMatched, Node: "n", Owner: "ns/pod", ExpiresAt: &later},
		"ns/reserved": {Phase: v1alpha1.ReservationReserved, Node: "n", ExpiresAt: &later},
	}}
	var out bytes.Buffer
	if err := showReservations(&out, d, now); err != nil {
		t.Fatal(err)
	}
	if row := columns(t, out.String(), "ns/matched"); row[len(row)-1] != "-" {
		t.Errorf("a Matched reservation's EXPIRES is %q, want -:\n%s", row[len(row)-1], out.String())
	}
	if row := columns(t, out.String(), "ns/reserved"); row[len(row)-1] == "-" {
		t.Errorf("a Reserved reservation shows no expiry:\n%s", out.String())
	}
}

// TestRun_HelpShowsTheDebugURLFlagPlainly: pflag reads a back-quoted word of a flag's usage
// as its value's name; the help must say `--debug-url string`, not `--debug-url make run`.
func TestRun_HelpShowsTheDebugURLFlagPlainly(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("--help: exit code %d", code)
	}
	help := out.String() + errOut.String()
	if !strings.Contains(help, "--debug-url string") || strings.Contains(help, "--debug-url make") {
		t.Errorf("help renders --debug-url oddly:\n%s", help)
	}
	for _, line := range strings.Split(help, "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "--") && strings.Contains(line, "`") {
			t.Errorf("a flag's usage keeps a back quote: %s", line)
		}
	}
}

// TestChoosePod_NoPodSuggestsDebugURLForALocalRun: nothing installed in the namespace (as
// with `make run`): the error says how to reach a local run.
func TestChoosePod_NoPodSuggestsDebugURLForALocalRun(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "elsewhere", Name: "x"}})
	_, err := choosePod(context.Background(), cs, target{namespace: "multicache-system", selector: "app=multicache"})
	if err == nil || !strings.Contains(err.Error(), "--debug-url=http://127.0.0.1:8082") || !strings.Contains(err.Error(), "make run") {
		t.Errorf("error %v, want it to suggest --debug-url for a local run", err)
	}
}
