package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seed0f91f25e/multicache/test/chaos/writelog"
)

// The write logs say which process wrote what, at which revision; the lease's versions say
// who held it at each revision. A status write (or a reservation delete) by a process
// while another one held the lease is a write after the lease was lost.

type procKey struct {
	replica string
	pid     int
}

// writer is who made the write at a revision.
type writer struct {
	proc procKey
	// late: the process did not hold the lease then; paused: it was a leader SIGSTOPped past
	// its lease, writing after SIGCONT.
	late, paused bool
}

// Writes is what the write logs tell: every guarded write (status of Reservation,
// PodGroup, Movement; reservation deletes) by revision.
type Writes struct {
	by       map[int64]writer
	PerProc  map[string]int
	Late     int
	entries  []writelog.Entry
	ids      map[procKey]map[string]bool
	starts   map[string][]writelog.Entry
	timeline map[int64]string
	// pausedRVs are the revisions [first, last] of each paused leader's late writes.
	pausedRVs [][2]int64
	// leaseBy is the process that wrote each lease revision (from the write logs).
	leaseBy map[int64]procKey
}

// Writer describes who wrote the version at revision rv, for a violation's detail.
func (w *Writes) Writer(rv int64) string {
	wr, ok := w.by[rv]
	if !ok {
		// Not logged: the process ended with the request in flight. Right after a paused
		// leader's last logged late write, that is the paused leader's last write.
		for _, r := range w.pausedRVs {
			if rv > r[0] && rv <= r[1]+20 {
				return " [writer not in any write log; by its revision, the last write of a paused leader before it exited, " +
					lateByPausedLeader + "]"
			}
		}
		return " [writer not in any write log: a process that ended before it logged the answer]"
	}
	s := fmt.Sprintf(" [written by replica %s (pid %d)", wr.proc.replica, wr.proc.pid)
	switch {
	case wr.paused:
		s += ", " + lateByPausedLeader
	case wr.late:
		s += ", which did not hold the lease"
	}
	return s + "]"
}

// lateByPausedLeader marks the writes of a leader SIGSTOPped past its lease, after SIGCONT.
const lateByPausedLeader = "a late write of a leader paused past its lease"

// staleRelease marks a lease emptied by a process that no longer held it (client-go's
// release on exit).
const staleRelease = "a release by a leader that had already lost the lease"

// readWrites reads the replicas' write logs and attributes every guarded write, checking it
// against the lease holder at its revision: a write while another process held the lease is
// reported (once per process and holder) through fail.
func readWrites(replicas []*Replica, leaseName string, leases []LeaseRec, pauses []PauseWindow, renewDeadline time.Duration,
	fail func(check, format string, args ...any), logf func(string, ...any)) *Writes {
	w := &Writes{by: map[int64]writer{}, PerProc: map[string]int{}, ids: map[procKey]map[string]bool{},
		starts: map[string][]writelog.Entry{}, timeline: map[int64]string{}, leaseBy: map[int64]procKey{}}
	for _, r := range replicas {
		es, err := writelog.Read(r.WriteLog())
		if err != nil {
			logf("reading %s: %v", r.WriteLog(), err)
			continue
		}
		w.entries = append(w.entries, es...)
	}
	// The lease timeline, from the recorder and from the lease writes themselves, and each
	// process's identity (the holder its own lease writes name).
	for _, l := range leases {
		w.timeline[l.RV] = l.Holder
	}
	for _, e := range w.entries {
		if e.Start {
			w.starts[e.Replica] = append(w.starts[e.Replica], e)
			continue
		}
		res, _, name, _ := e.Resource()
		if res == "leases" && name == leaseName && e.OK() && e.Holder == "" && e.RV != "" {
			// A release: the holder is emptied.
			rv, _ := strconv.ParseInt(e.RV, 10, 64)
			w.timeline[rv] = ""
			w.leaseBy[rv] = procKey{e.Replica, e.PID}
		}
		if res == "leases" && name == leaseName && e.OK() && e.Holder != "" {
			rv, _ := strconv.ParseInt(e.RV, 10, 64)
			w.timeline[rv] = e.Holder
			w.leaseBy[rv] = procKey{e.Replica, e.PID}
			k := procKey{e.Replica, e.PID}
			if w.ids[k] == nil {
				w.ids[k] = map[string]bool{}
			}
			w.ids[k][e.Holder] = true
		}
	}
	revs := make([]int64, 0, len(w.timeline))
	for rv := range w.timeline {
		revs = append(revs, rv)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	holderBefore := func(rv int64) string {
		i := sort.Search(len(revs), func(i int) bool { return revs[i] >= rv })
		if i == 0 {
			return ""
		}
		return w.timeline[revs[i-1]]
	}
	// releaseBefore describes the release that emptied the lease before rv, when one did.
	releaseBefore := func(rv int64) string {
		i := sort.Search(len(revs), func(i int) bool { return revs[i] >= rv })
		if i == 0 || w.timeline[revs[i-1]] != "" {
			return ""
		}
		by, ok := w.leaseBy[revs[i-1]]
		if !ok {
			return fmt.Sprintf("nobody: the lease was released at revision %d", revs[i-1])
		}
		prev := ""
		if i >= 2 {
			prev = w.timeline[revs[i-2]]
		}
		if prev != "" && !w.ids[by][prev] {
			return fmt.Sprintf("nobody: the lease was released at revision %d by replica %s (pid %d) while %s held it, %s",
				revs[i-1], by.replica, by.pid, w.holderName(prev), staleRelease)
		}
		return fmt.Sprintf("nobody: the lease was released at revision %d by replica %s (pid %d)", revs[i-1], by.replica, by.pid)
	}
	// The processes that were paused, and when they continued.
	pausedProc := map[procKey]PauseWindow{}
	for _, p := range pauses {
		pid := 0
		for _, s := range w.starts[p.Replica] {
			if s.Time.Before(p.Stopped) {
				pid = s.PID
			}
		}
		pausedProc[procKey{p.Replica, pid}] = p
	}

	type lateKey struct {
		proc   procKey
		holder string
		never  bool
		// released describes the release that left the lease without a holder.
		released string
	}
	type lateWrites struct {
		n           int
		first, last writelog.Entry
		objects     map[string]bool
		paused      bool
	}
	lates := map[lateKey]*lateWrites{}
	for _, e := range w.entries {
		if e.Start || !e.OK() {
			continue
		}
		if !guardedWrite(e) {
			continue
		}
		res, ns, name, _ := e.Resource()
		w.PerProc[e.Replica]++
		rv, err := strconv.ParseInt(e.RV, 10, 64)
		if err != nil {
			continue
		}
		k := procKey{e.Replica, e.PID}
		mine := w.ids[k]
		holder := holderBefore(rv)
		wr := writer{proc: k}
		if len(mine) == 0 || !mine[holder] {
			wr.late = true
			p, wasPaused := pausedProc[k]
			wr.paused = wasPaused && !e.Sent.Before(p.Continued) && e.Sent.Before(p.Continued.Add(renewDeadline+2*time.Second))
			w.Late++
			lk := lateKey{k, holder, len(mine) == 0, ""}
			if holder == "" {
				lk.released = releaseBefore(rv)
			}
			lw := lates[lk]
			if lw == nil {
				lw = &lateWrites{first: e, objects: map[string]bool{}, paused: true}
				lates[lk] = lw
			}
			lw.n++
			lw.last = e
			lw.objects[res+" "+ns+"/"+name] = true
			lw.paused = lw.paused && wr.paused
		}
		w.by[rv] = wr
	}
	for _, lw := range lates {
		if lw.paused {
			first, _ := strconv.ParseInt(lw.first.RV, 10, 64)
			last, _ := strconv.ParseInt(lw.last.RV, 10, 64)
			w.pausedRVs = append(w.pausedRVs, [2]int64{first, last})
		}
	}
	for k, lw := range lates {
		var objs []string
		for o := range lw.objects {
			objs = append(objs, o)
		}
		sort.Strings(objs)
		why := "while " + w.holderName(k.holder) + " held the lease"
		if k.released != "" {
			why = "while " + k.released
		}
		if k.never {
			why = "and never held the lease (no lease write of its own in its write log)"
		}
		if lw.paused {
			p := pausedProc[k.proc]
			why += fmt.Sprintf(": all of them after SIGCONT at %s, %s", p.Continued.Format("15:04:05.000"), lateByPausedLeader)
		}
		fail("fencing", "replica %s (pid %d) made %d status writes or deletes of %d objects from %s to %s (revisions %s to %s) %s; e.g. %s",
			k.proc.replica, k.proc.pid, lw.n, len(objs), lw.first.Time.Format("15:04:05.000"), lw.last.Time.Format("15:04:05.000"),
			lw.first.RV, lw.last.RV, why, strings.Join(objs[:min(3, len(objs))], ", "))
	}
	// What each paused leader sent after SIGCONT, whatever the kind (events included).
	for k, p := range pausedProc {
		kinds := map[string]int{}
		for _, e := range w.entries {
			if e.Start || e.Replica != k.replica || e.PID != k.pid || e.Sent.Before(p.Continued) {
				continue
			}
			res, _, _, sub := e.Resource()
			kinds[fmt.Sprintf("%s %s%s %d", e.Method, res, slash(sub), e.Code)]++
		}
		logf("after SIGCONT at %s, replica %s (pid %d) sent: %v", p.Continued.Format("15:04:05.000"), k.replica, k.pid, kinds)
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

func slash(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
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
