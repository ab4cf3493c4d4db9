package wiretrim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
)

// listBody is a protobuf list response, trimmed whole on the first Read (client-go reads
// a list's body whole before decoding it).
type listBody struct {
	src  io.ReadCloser
	rule *rule
	out  *bytes.Reader
	err  error
}

func (b *listBody) Read(p []byte) (int, error) {
	if b.out == nil {
		data, err := io.ReadAll(b.src)
		b.err = err
		if err == nil {
			if trimmed, ok := b.rule.appendEncoded(make([]byte, 0, len(data)), data); ok {
				data = trimmed
			}
		}
		b.out = bytes.NewReader(data)
	}
	n, _ := b.out.Read(p)
	if b.out.Len() == 0 {
		if b.err != nil {
			return n, b.err
		}
		if n == 0 {
			return 0, io.EOF
		}
	}
	return n, nil
}

func (b *listBody) Close() error { return b.src.Close() }

// maxFrame bounds the frame held in memory to be trimmed: client-go's decoder of watch
// streams takes none longer (k8s.io/apimachinery/pkg/runtime/serializer/streaming); a
// longer one and everything after it pass through.
const maxFrame = 16 << 20

// keptBuffer is the largest buffer a watch keeps between frames.
const keptBuffer = 1 << 20

// watchBody is a protobuf watch stream: frames of a 4-byte big-endian length and a
// metav1.WatchEvent, each trimmed as soon as it is read whole.
type watchBody struct {
	src         io.ReadCloser
	rule        *rule
	in, out     []byte
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
	return n, nil
}

// next reads the next frame and makes it, trimmed, pending.
func (b *watchBody) next() {
	// A watch lives for minutes (a shard has one per node): a rare large frame's buffers
	// are let go rather than kept for it.
	if cap(b.in) > keptBuffer {
		b.in = nil
	}
	if cap(b.out) > keptBuffer {
		b.out = nil
	}
	b.out = append(b.out[:0], 0, 0, 0, 0)
	n, err := io.ReadFull(b.src, b.out[:4])
	if err != nil {
		b.pending, b.err = b.out[:n], eof(err)
		return
	}
	size := binary.BigEndian.Uint32(b.out[:4])
	if size > maxFrame {
		b.pending, b.passThrough = b.out[:4], true
		return
	}
	frame, err := b.readFrame(int(size))
	if err != nil {
		b.out = append(b.out, frame...)
		b.pending, b.err = b.out, eof(err)
		return
	}
	if out, ok := b.rule.appendEvent(b.out, frame); ok {
		binary.BigEndian.PutUint32(out[:4], uint32(len(out)-4))
		b.out = out
	} else {
		b.out = append(out[:4], frame...)
	}
	b.pending = b.out
}

// readFrame reads a frame of size bytes into b.in, grown as the bytes arrive rather than
// to the size a malformed header announces; on an error, it returns what it read.
func (b *watchBody) readFrame(size int) ([]byte, error) {
	buf := b.in[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(size-len(buf), max(len(buf), 32<<10)))
		}
		n, err := b.src.Read(buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err != nil && len(buf) < size {
			b.in = buf
			return buf, err
		}
	}
	b.in = buf
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

func (b *watchBody) Close() error { return b.src.Close() }
