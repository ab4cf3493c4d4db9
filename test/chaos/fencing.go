package chaos

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

// The write logs say which process wrote what, at which revision; the lease's versions say
// who held it at each revision. A status write (or a reservation delete) by a process
// while another one held the lease is a write after the lease was lost.

type procKey struct {
	replica string
	pid     int
}

// writer is who made the write at a revision; late: it did not hold the lease then.
type writer struct {
	proc procKey
	late bool
}

// Writes is what the write logs tell: every guarded write (status of Reservation,
// PodGroup, Movement; reservation deletes) by revision.
type Writes struct {
	by      map[int64]writer
	PerProc map[string]int
	Late    int
	entries []writelog.Entry
	// ids are the lease holder identities each process's own lease writes name.
	ids map[procKey]map[string]bool
}

// Writer describes who wrote the version at revision rv, for a violation's detail.
func (w *Writes) Writer(rv int64) string {
	wr, ok := w.by[rv]
	if !ok {
		return " [writer not in any write log: a process that ended before it logged the answer]"
	}
	s := fmt.Sprintf(" [written by replica %s (pid %d)", wr.proc.replica, wr.proc.pid)
	if wr.late {
		s += ", which did not hold the lease"
	}
	return s + "]"
}

// readWrites reads the replicas' write logs and attributes every guarded write, checking it
// against the lease holder at its revision: a write while another process held the lease,
// or nobody did, is reported (once per process and holder) through fail.
func readWrites(replicas []*Replica, leaseName string, leases []LeaseRec,
	fail func(check, format string, args ...any), logf func(string, ...any)) *Writes {
	w := &Writes{by: map[int64]writer{}, PerProc: map[string]int{}, ids: map[procKey]map[string]bool{}}
	for _, r := range replicas {
		es, err := writelog.Read(r.WriteLog())
		if err != nil {
			logf("reading %s: %v", r.WriteLog(), err)
			continue
		}
		w.entries = append(w.entries, es...)
	}
	// The lease timeline, from the recorder and from the lease writes themselves (a release
	// empties the holder), and each process's identity.
	timeline := map[int64]string{}
	for _, l := range leases {
		timeline[l.RV] = l.Holder
	}
	for _, e := range w.entries {
		if res, _, name, _ := e.Resource(); e.Start || res != "leases" || name != leaseName || !e.OK() || e.RV == "" {
			continue
		}
		rv, _ := strconv.ParseInt(e.RV, 10, 64)
		timeline[rv] = e.Holder
		if e.Holder != "" {
			k := procKey{e.Replica, e.PID}
			if w.ids[k] == nil {
				w.ids[k] = map[string]bool{}
			}
			w.ids[k][e.Holder] = true
		}
	}
	revs := slices.Sorted(maps.Keys(timeline))
	holderBefore := func(rv int64) string {
		i := sort.Search(len(revs), func(i int) bool { return revs[i] >= rv })
		if i == 0 {
			return ""
		}
		return timeline[revs[i-1]]
	}

	type lateKey struct {
		proc   procKey
		holder string
		never  bool
	}
	type lateWrites struct {
		n           int
		first, last writelog.Entry
		objects     map[string]bool
	}
	lates := map[lateKey]*lateWrites{}
	for _, e := range w.entries {
		if e.Start || !e.OK() || !guardedWrite(e) {
			continue
		}
		w.PerProc[e.Replica]++
		rv, err := strconv.ParseInt(e.RV, 10, 64)
		if err != nil {
			continue
		}
		k := procKey{e.Replica, e.PID}
		mine, holder := w.ids[k], holderBefore(rv)
		wr := writer{proc: k, late: !mine[holder]}
		w.by[rv] = wr
		if !wr.late {
			continue
		}
		w.Late++
		lk := lateKey{k, holder, len(mine) == 0}
		lw := lates[lk]
		if lw == nil {
			lw = &lateWrites{first: e, objects: map[string]bool{}}
			lates[lk] = lw
		}
		lw.n++
		lw.last = e
		res, ns, name, _ := e.Resource()
		lw.objects[res+" "+ns+"/"+name] = true
	}
	for k, lw := range lates {
		objs := slices.Sorted(maps.Keys(lw.objects))
		why := "while " + w.holderName(k.holder) + " held the lease"
		switch {
		case k.never:
			why = "and never held the lease (no lease write of its own in its write log)"
		case k.holder == "":
			why = "while nobody held the lease (it was released)"
		}
		fail("fencing", "replica %s (pid %d) made %d status writes or deletes of %d objects from %s to %s (revisions %s to %s) %s; e.g. %s",
			k.proc.replica, k.proc.pid, lw.n, len(objs), lw.first.Time.Format("15:04:05.000"), lw.last.Time.Format("15:04:05.000"),
			lw.first.RV, lw.last.RV, why, strings.Join(objs[:min(3, len(objs))], ", "))
	}
	return w
}

// holderName names a lease holder by the process that wrote it, when known.
func (w *Writes) holderName(holder string) string {
	for k, hs := range w.ids {
		if hs[holder] {
			return fmt.Sprintf("replica %s (pid %d, %s)", k.replica, k.pid, holder)
		}
	}
	return holder
}

// checkPanics scans every log of every replica for a panic, a fatal error or a data race.
func checkPanics(replicas []*Replica, fail func(check, format string, args ...any)) (scanned int) {
	for _, r := range replicas {
		for _, path := range r.Logs() {
			data, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			scanned++
			for i, line := range strings.Split(string(data), "\n") {
				// The runtime's own lines start with these; controller-runtime logs a
				// recovered reconciler panic as "Observed a panic".
				if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") ||
					strings.Contains(line, "WARNING: DATA RACE") || strings.Contains(line, "Observed a panic") {
					fail("panic", "%s:%d: %s", filepath.Base(path), i+1, truncate(line, 300))
				}
			}
		}
	}
	return scanned
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
