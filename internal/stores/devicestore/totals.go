package devicestore

import (
	"fmt"
	"maps"
	"slices"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The cluster's device counts (ClusterCounts, what multicache_devices reports on every
// scrape) are kept as events change them rather than counted on each read: a scrape of
// 40,000 devices counted them in 25-30 ms under the cache's read lock. Each published
// device records what it adds to the totals (its share); whatever may change that
// (publication, holders, assumptions, classes) recounts the device, which takes its old
// share out and puts its new one in. checkTotals compares them with a full count; when the
// handler's recheck confirms a miscount, RebuildTotals recounts every share and the totals
// from the pools, so that a miscount is reported once rather than served until a restart.

// totals are the cluster's devices, each counted once however many nodes it reaches: all
// of them, and per DeviceClass.
type totals struct {
	all     store.DeviceCounts
	byClass map[string]*store.DeviceCounts
}

func newTotals() totals { return totals{byClass: map[string]*store.DeviceCounts{}} }

// share is what one device adds to the totals: nothing unless counted (its pool publishes
// it to some node).
type share struct {
	counted, held, assumed bool
	classes                *classSet
}

func (t *totals) apply(sh share, sign int) {
	if !sh.counted {
		return
	}
	count(&t.all, sh.held, sh.assumed, sign)
	for _, name := range sh.classes.names {
		c := t.byClass[name]
		if c == nil {
			c = &store.DeviceCounts{}
			t.byClass[name] = c
		}
		count(c, sh.held, sh.assumed, sign)
	}
}

// shareOf is what a device adds to the totals as its versions stand: counted when some
// version is published to some node, in the classes of any such version.
func (s *Store) shareOf(e *device, id DeviceID) share {
	var sh share
	for _, v := range e.versions {
		switch {
		case v.nodes.len() == 0:
		case !sh.counted:
			sh.counted, sh.classes = true, v.classes
		case sh.classes != v.classes:
			for _, name := range v.classes.names {
				sh.classes = s.classSets.with(sh.classes, name, true)
			}
		}
	}
	if sh.counted {
		sh.held, sh.assumed = s.allocated(id), s.assumedHolder(id)
	}
	return sh
}

// recount brings the totals to a device's current share, after something it is counted by
// (its versions' nodes or classes, its holders, their assumptions) may have changed.
func (s *Store) recount(p *pool, id DeviceID) {
	e := p.devices[id]
	if e == nil {
		return
	}
	if now := s.shareOf(e, id); now != e.share {
		s.totals.apply(e.share, -1)
		s.totals.apply(now, 1)
		e.share = now
	}
}

// uncount takes a device's share out of the totals, before the pool forgets it.
func (s *Store) uncount(e *device) {
	s.totals.apply(e.share, -1)
	e.share = share{}
}

// RebuildTotals implements store.TotalsRebuilder, under the handler's write lock: when the
// last self-check found the totals miscounted, every device's share is recounted from its
// pool and the totals summed again from the shares. It returns the totals that differed,
// kept and rebuilt; nil when the last check found nothing wrong or they agree by now.
func (s *Store) RebuildTotals() []string {
	if !s.miscounted.Swap(false) {
		return nil
	}
	fresh := s.countAll(true)
	var fixed []string
	if s.totals.all != fresh.all {
		fixed = append(fixed, fmt.Sprintf("all devices: %+v, rebuilt %+v", s.totals.all, fresh.all))
	}
	for _, name := range slices.Sorted(maps.Keys(s.classes)) {
		if kept, now := s.totals.of(name), fresh.of(name); kept != now {
			fixed = append(fixed, fmt.Sprintf("DeviceClass %s: %+v, rebuilt %+v", name, kept, now))
		}
	}
	s.totals = fresh
	return fixed
}

// countAll counts the cluster's devices afresh from the pools, as the totals should hold
// them; keep makes each device's fresh share its own (RebuildTotals).
func (s *Store) countAll(keep bool) totals {
	fresh := newTotals()
	for _, p := range s.pools {
		for id, e := range p.devices {
			sh := s.shareOf(e, id)
			if keep {
				e.share = sh
			}
			fresh.apply(sh, 1)
		}
	}
	return fresh
}

// of returns the counts of a class, zero when none is counted.
func (t *totals) of(class string) store.DeviceCounts {
	if c := t.byClass[class]; c != nil {
		return *c
	}
	return store.DeviceCounts{}
}
