package handler

import (
	"fmt"
	"testing"
	"time"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkReservation_BurstOnOneNode adds 1,000 reservations (selecting no pod) to a node
// running 500 pods, one after another, as the chaos suite's burst does on each of 10 nodes
// (known defect D4: settling the node re-matched every pod against every open reservation
// at each addition). Run:
// go test -run '^$' -bench BenchmarkReservation_BurstOnOneNode -benchtime 3x ./internal/handler
func BenchmarkReservation_BurstOnOneNode(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		h, clk := newQuietHandler(b)
		must(b, h.Add(ts.MakeNode("n1", "1000", "4000Gi")))
		for i := range 500 {
			must(b, h.Add(ts.MakePod("ns", fmt.Sprintf("p-%03d", i), ts.OnNode("n1"), ts.Requests("100m", "128Mi"),
				ts.WithLabels("app", "web"), ts.CreatedAt(t0))))
		}
		clk.Step(time.Second)
		b.StartTimer()
		for i := range 1000 {
			r := ts.ReservationCreatedAt(ts.MakeReservation("ns", fmt.Sprintf("r-%04d", i), "n1", "10m", "1Mi", "app", "nobody"), clk.Now())
			must(b, h.Add(r))
		}
	}
}
