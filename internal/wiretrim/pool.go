package wiretrim

import "sync"

// firstFrameBuffer is the buffer a watch's frame is first read into; a longer frame's
// buffer doubles as its bytes arrive.
const firstFrameBuffer = 32 << 10

// bufferClasses are the capacities of the pooled buffers, each pooled apart: a frame takes
// the smallest that holds it, so that a pod of a few kilobytes never holds a buffer a
// large one needed. A frame over the largest gets a buffer of its own, let go after it.
var bufferClasses = [...]int{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}

var bufferPools [len(bufferClasses)]sync.Pool // of *buffer

// buffer is a pooled byte slice (pooled by pointer: putting a slice in a sync.Pool
// allocates).
type buffer struct {
	b     []byte
	class int // index in bufferClasses, -1 for a buffer of its own
}

// getBuffer returns an empty buffer of at least n bytes' capacity.
func getBuffer(n int) *buffer {
	for i, c := range bufferClasses {
		if n <= c {
			if b, _ := bufferPools[i].Get().(*buffer); b != nil {
				b.b = b.b[:0]
				return b
			}
			return &buffer{b: make([]byte, 0, c), class: i}
		}
	}
	return &buffer{b: make([]byte, 0, n), class: -1}
}

// release gives b back to its pool (nil, or a buffer of its own, is let go) and returns
// nil, for the holder to forget it.
func (b *buffer) release() *buffer {
	if b != nil && b.class >= 0 && cap(b.b) == bufferClasses[b.class] {
		b.b = b.b[:0]
		bufferPools[b.class].Put(b)
	}
	return nil
}
