package wiretrim

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
)

// listBody is a protobuf list response, trimmed whole on the first Read (client-go reads
// a list's body whole before decoding it). The list is held once while trimmed: read into
// one buffer (sized by the Content-Length when the API server sent one), trimmed in place
// once it is known to parse, and let go of when read to its end; client-go's own copy is
// the only other.
type listBody struct {
	src  io.ReadCloser
	rule *rule
	// size is the body's Content-Length, -1 when unknown.
	size int64
	// data[off:] is what is left to read; read says whether src was read.
	data []byte
	off  int
	read bool
	err  error
}

func (b *listBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.data, b.err = readAll(b.src, b.size)
		if b.err == nil && b.rule.validEncoded(b.data) {
			// Trimming only drops bytes: its output never overtakes its input.
			b.data, _ = b.rule.appendEncoded(b.data[:0], b.data)
		}
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	if b.off < len(b.data) {
		return n, nil
	}
	b.data, b.off = nil, 0 // read whole: let it go
	if b.err != nil {
		return n, b.err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (b *listBody) Close() error { return b.src.Close() }

// maxSizeHint bounds the buffer a Content-Length sizes up front; a body longer grows past
// it as it is read.
const maxSizeHint = 1 << 30

// readAll reads r to its end into one buffer of size bytes (and a little room to see the
// end) when size is known, else grown as io.ReadAll grows it.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxSizeHint {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, size+512)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf)/4+512)
		}
	}
}

// maxFrame bounds the frame held in memory to be trimmed: client-go's decoder of watch
// streams takes none longer (k8s.io/apimachinery/pkg/runtime/serializer/streaming); a
// longer one and everything after it pass through.
const maxFrame = 16 << 20

// watchBody is a protobuf watch stream: frames of a 4-byte big-endian length and a
// metav1.WatchEvent, each trimmed as soon as it is read whole. Its buffers come from a
// pool, sized to the frame, and go back once the trimmed frame has been read: a watch
// waiting for its next event (a shard has one per node, for minutes) holds none.
type watchBody struct {
	src         io.ReadCloser
	rule        *rule
	head        [4]byte
	in, out     *buffer
	pending     []byte
	passThrough bool
	err         error
}

func (b *watchBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		switch {
		case b.passThrough:
			return b.src.Read(p)
		case b.err != nil:
			return 0, b.err
		}
		b.next()
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	if len(b.pending) == 0 {
		b.out = b.out.release()
	}
	return n, nil
}

// next reads the next frame and makes it, trimmed, pending.
func (b *watchBody) next() {
	n, err := io.ReadFull(b.src, b.head[:])
	if err != nil {
		b.pending, b.err = b.head[:n], eof(err)
		return
	}
	size := binary.BigEndian.Uint32(b.head[:])
	if size > maxFrame {
		b.pending, b.passThrough = b.head[:], true
		return
	}
	frame, err := b.readFrame(int(size))
	// The trimmed frame is no longer than the frame.
	b.out = getBuffer(4 + len(frame))
	out := append(b.out.b[:0], b.head[:]...)
	if err != nil {
		b.pending, b.err = append(out, frame...), eof(err)
	} else if trimmed, ok := b.rule.appendEvent(out, frame); ok {
		binary.BigEndian.PutUint32(trimmed[:4], uint32(len(trimmed)-4))
		b.pending = trimmed
	} else {
		b.pending = append(out[:4], frame...)
	}
	b.out.b = b.pending
	b.in = b.in.release()
}

// readFrame reads a frame of size bytes into b.in, grown as the bytes arrive rather than
// to the size a malformed header announces; on an error, it returns what it read.
func (b *watchBody) readFrame(size int) ([]byte, error) {
	b.in = getBuffer(min(size, firstFrameBuffer))
	buf := b.in.b[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			bigger := getBuffer(min(size, 2*cap(buf)))
			buf = append(bigger.b[:0], buf...)
			b.in.release()
			b.in = bigger
		}
		n, err := b.src.Read(buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < size {
			b.in.b = buf
			return buf, err
		}
	}
	b.in.b = buf
	return buf, nil
}

// eof undoes io.ReadFull's io.ErrUnexpectedEOF: the stream ended where it ended, as its
// reader would have seen it without the trimmer.
func eof(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return io.EOF
	}
	return err
}

// Close closes the stream. It leaves the buffers to the garbage collector: client-go closes
// a watch's body from another goroutine while its reader may be in Read.
func (b *watchBody) Close() error { return b.src.Close() }
