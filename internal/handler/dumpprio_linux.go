package handler

import (
	"runtime"
	"syscall"
)

// dumpNice is the nice value a dump's thread runs at: the lowest priority.
const dumpNice = 19

// atLowPriority runs fn on an OS thread of its own at nice dumpNice and returns what fn
// returns (a panic in fn is raised again here). On Linux a nice value is a thread's
// (setpriority(2), who = a thread ID): the event path, the API server and etcd on the same
// machine are given the CPU before the dump whenever they need it. The thread is never
// unlocked: it ends with its goroutine (runtime.LockOSThread) instead of running other
// goroutines at that priority, which an unprivileged process could not raise back. Should
// the kernel refuse (a seccomp profile), fn runs at the process's priority.
func atLowPriority(fn func() error) error {
	type result struct {
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var r result
		defer func() {
			r.panic = recover()
			done <- r
		}()
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), dumpNice)
		r.err = fn()
	}()
	r := <-done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}
