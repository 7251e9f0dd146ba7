package rawjson

import (
	"io"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SDKMaxDepth is the nesting the SDK's decoder accepts in one frame; a
// deeper frame fails to decode and ends the session.
const SDKMaxDepth = 1000

// MaxFrame is the most bytes the firewall reads of one message from an
// upstream, whichever way it comes: a frame a Splitter holds (a
// longer one passes unread, and the SDK refuses it), an HTTP upstream's
// answer body or event (relay's HTTP screen refuses it). It is the SDK's own
// default cap on a stdio line and on an event (mcp.DefaultMaxLineLength,
// mcp.DefaultMaxEventSize: 16 MiB), so a message is refused at one size on
// every path: room for any answer a host's model can use, base64 images
// and all (a Go SDK host reads no longer line), while the few an upstream
// has in flight cost serve tens of MiB, not the machine.
const MaxFrame = mcp.DefaultMaxLineLength

// Splitter reads a stream of JSON frames for the SDK's stdio
// connection and hands each complete frame to pick, which returns what the
// SDK reads instead: the frame itself, other bytes, or nothing (a frame
// the caller took care of). It finds a frame's end with one scan that
// counts brackets outside strings, and notes how deep the frame nests.
// Whitespace between frames passes as it is; a stream that does not start
// a frame where one should start, or a frame longer than MaxFrame, passes
// unread from there on (the SDK refuses it as it would without the firewall).
//
// pick may read the frame in place until it returns; the array is reused
// for the frames after it, unless pick was told the frame is deep (a
// screen of a deep frame may keep slices of it).
type Splitter struct {
	src  io.Reader
	pick func(frame []byte, deep bool) []byte

	buf     []byte // read from src, not yet a whole frame
	store   []byte // the array buf was read into, reused once out is drained
	out     []byte // ready for the SDK
	scanned int    // bytes of buf already scanned
	depth   int    // nesting at buf[scanned]
	deepest int    // deepest nesting of the frame so far
	inStr   bool   // buf[scanned] is inside a string
	escaped bool   // and follows a backslash
	through bool   // stopped splitting: the rest passes unread
	err     error  // from src, returned once out and buf are drained
}

// NewSplitter returns a Splitter reading src and handing each frame to
// pick.
func NewSplitter(src io.Reader, pick func(frame []byte, deep bool) []byte) *Splitter {
	return &Splitter{src: src, pick: pick}
}

// Read returns the stream's bytes as pick returned them, frame by frame.
func (f *Splitter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.through && len(f.buf) == 0 {
			return f.src.Read(p)
		}
		if err := f.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next moves what can be handed on from buf to out, reading src when buf
// holds no complete frame.
func (f *Splitter) next() error {
	if f.through {
		f.out, f.buf = f.buf, nil
		return nil
	}
	if i := SkipSpace(f.buf, 0); i > 0 && f.scanned == 0 {
		f.out, f.buf = f.buf[:i:i], f.buf[i:]
		return nil
	}
	if len(f.buf) > 0 && f.scanned == 0 && f.buf[0] != '{' && f.buf[0] != '[' {
		f.through = true // not a frame the SDK can read either
		return nil
	}
	if end := f.scan(); end > 0 {
		frame := f.buf[:end:end]
		f.buf = f.buf[end:]
		deep := f.deepest > SDKMaxDepth
		f.scanned, f.deepest = 0, 0
		if deep {
			f.store = nil // pick keeps slices of a deep frame: never reuse it
		}
		f.out = f.pick(frame, deep)
		return nil
	}
	if len(f.buf) > MaxFrame {
		f.through = true
		return nil
	}
	if f.err != nil {
		if len(f.buf) > 0 {
			f.through = true
			return nil
		}
		return f.err
	}
	f.refill()
	return nil
}

// frameReuse is the largest read buffer a Splitter keeps for the next
// frames; a larger one, made for a large frame, is let go after it.
const frameReuse = 1 << 20

// refill reads more of src into buf. The array frames were read into is
// reused once every frame in it has been handed on (next runs only when
// out is drained): a stream of frames then costs no garbage, where a new
// array per frame would cost several times its size, which under a flood
// of large requests would be most of what serve allocates.
func (f *Splitter) refill() {
	if f.store != nil && len(f.buf) <= cap(f.store) {
		f.buf = f.store[:copy(f.store, f.buf)]
	}
	f.buf = slices.Grow(f.buf, 64<<10)
	f.store = nil
	if cap(f.buf) <= frameReuse {
		f.store = f.buf[:cap(f.buf)]
	}
	n, err := f.src.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf, f.err = f.buf[:len(f.buf)+n], err
}

// scan goes on through buf and returns the end of the frame that starts
// at buf[0], or 0 while it is incomplete.
func (f *Splitter) scan() int {
	for ; f.scanned < len(f.buf); f.scanned++ {
		b := f.buf[f.scanned]
		switch {
		case f.escaped:
			f.escaped = false
		case f.inStr:
			f.escaped = b == '\\'
			f.inStr = b != '"'
		case b == '"':
			f.inStr = true
		case b == '{' || b == '[':
			f.depth++
			f.deepest = max(f.deepest, f.depth)
		case b == '}' || b == ']':
			if f.depth--; f.depth == 0 {
				f.scanned++
				return f.scanned
			}
		}
	}
	return 0
}
