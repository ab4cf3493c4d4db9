package lownode

import (
	"flag"
	"fmt"
	"time"
)

// Settings are lownode's flags.
type Settings struct {
	// Low and High are percents of a node's allocatable CPU requested: a node under Low is
	// underused (it takes pods), one over High overused (it gives pods up).
	Low, High int
	// Interval is the time between two plans.
	Interval time.Duration
	// Evict turns the plan into evictions; off, the plan is only logged.
	Evict bool
	// MaxPerNode bounds the pods evicted from one node per plan.
	MaxPerNode int
}

// DefaultSettings are the flags' defaults.
func DefaultSettings() *Settings {
	return &Settings{Low: 20, High: 50, Interval: time.Minute, MaxPerNode: 5}
}

// BindFlags implements multicache.SiblingSettings.
func (s *Settings) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.Low, "lownode-low", s.Low, "lownode: a node whose requested CPU is under this percent of its allocatable takes pods.")
	fs.IntVar(&s.High, "lownode-high", s.High, "lownode: a node whose requested CPU is over this percent of its allocatable gives pods up, down to it.")
	fs.DurationVar(&s.Interval, "lownode-interval", s.Interval, "lownode: time between two plans.")
	fs.BoolVar(&s.Evict, "lownode-evict", s.Evict, "lownode: evict the planned pods (through the Eviction API); off, the plan is only logged.")
	fs.IntVar(&s.MaxPerNode, "lownode-max-per-node", s.MaxPerNode, "lownode: at most this many pods evicted from one node per plan.")
}

// Validate implements multicache.SiblingSettings.
func (s *Settings) Validate() error {
	switch {
	case s.Low < 0 || s.Low > 100 || s.High < 0 || s.High > 100:
		return fmt.Errorf("--lownode-low=%d, --lownode-high=%d: both are percents, 0 to 100", s.Low, s.High)
	case s.Low >= s.High:
		return fmt.Errorf("--lownode-low=%d must be under --lownode-high=%d", s.Low, s.High)
	case s.Interval <= 0:
		return fmt.Errorf("--lownode-interval=%s: must be positive", s.Interval)
	case s.MaxPerNode < 1:
		return fmt.Errorf("--lownode-max-per-node=%d: must be at least 1", s.MaxPerNode)
	}
	return nil
}
