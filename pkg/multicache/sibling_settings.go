package multicache

import (
	"flag"
	"fmt"
)

// SiblingSettings are a sibling's own settings, set from the command line: the command
// registers them beside multicache's flags (they show in --help and parse with the rest),
// validates them with the rest, and hands them to the sibling's factory, typed.
//
// A program that embeds multicache and has its settings at hand (not from flags) needs
// none of this: a factory is a closure, so it passes them as it builds the sibling.
type SiblingSettings interface {
	// BindFlags registers the sibling's flags on fs. Name them after the sibling
	// (--descheduler-threshold) so that they do not collide with multicache's or another
	// sibling's: a name taken twice is reported by the command, which exits with code 2.
	BindFlags(fs *flag.FlagSet)
	// Validate reports a bad value once the flags are parsed, naming the flag and what to
	// fix; the command prints it and exits with code 2.
	Validate() error
}

// WithSiblingSettings registers a sibling that takes settings: settings bind their flags
// to the command line, are validated after the parse, and reach factory with the sibling's
// deps. Otherwise it is WithSibling.
func WithSiblingSettings[S SiblingSettings](settings S, factory func(SiblingDeps, S) (Sibling, error)) Option {
	return func(c *Command) {
		if factory == nil {
			c.siblings = append(c.siblings, nil) // reported by the parse, as WithSibling's
			return
		}
		c.siblings = append(c.siblings, func(d SiblingDeps) (Sibling, error) { return factory(d, settings) })
		c.settings = append(c.settings, settings)
	}
}

// bindSiblingFlags registers every sibling's flags on fs, each through a flag set of its
// own first, so that a name taken by multicache or by another sibling is an error that
// names it rather than the flag package's panic.
func bindSiblingFlags(fs *flag.FlagSet, settings []SiblingSettings) error {
	for i, s := range settings {
		own := flag.NewFlagSet(fmt.Sprintf("sibling %d", i), flag.ContinueOnError)
		s.BindFlags(own)
		var taken error
		own.VisitAll(func(f *flag.Flag) {
			if taken != nil {
				return
			}
			if fs.Lookup(f.Name) != nil {
				taken = fmt.Errorf("registering siblings: sibling settings %T define --%s, which is already defined: name a sibling's flags after it", s, f.Name)
				return
			}
			fs.Var(f.Value, f.Name, f.Usage)
		})
		if taken != nil {
			return taken
		}
	}
	return nil
}

// validateSiblingSettings runs every sibling's Validate after the parse.
func validateSiblingSettings(settings []SiblingSettings) error {
	for _, s := range settings {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}
