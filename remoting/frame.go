package remoting

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
)

// A frame is
//
//	int32 length (of everything after it) | int32 (serialize type << 24 | header length) |
//	header | body
//
// all big-endian. The frame size that limits apply to is the whole frame, length prefix
// included, as in Java's LengthFieldBasedFrameDecoder.

// DefaultMaxFrameSize is the default limit on a frame's size, length prefix included:
// Java's com.rocketmq.remoting.frameMaxLength default, 16 MiB.
const DefaultMaxFrameSize = 16 << 20

// maxHeaderLen is the largest header the 24-bit header length can describe.
const maxHeaderLen = 1<<24 - 1

// frameReadBufferSize is the FrameReader's buffer; headers up to this size are decoded in
// place and larger bodies are read straight into their own allocation.
const frameReadBufferSize = 16 << 10

// EncodeFrame appends cmd as one whole frame (length prefix, header-length word, header in
// cmd.Serialize, body) to dst and returns the extended slice, so the frame can be written
// with a single write. On error dst is returned unchanged in length, with an error naming
// the code and opaque and what cannot be encoded (a ROCKETMQ code or version outside
// int16, a header over 16 MiB, an unknown serialization).
func EncodeFrame(dst []byte, cmd *Command) ([]byte, error) {
	out, err := appendFrame(dst, cmd)
	if err != nil {
		return dst, fmt.Errorf("remoting: encoding code %d (opaque %d): %w", cmd.Code, cmd.Opaque, err)
	}
	return out, nil
}

// appendFrame is EncodeFrame with an error that does not name the command.
func appendFrame(dst []byte, cmd *Command) ([]byte, error) {
	start := len(dst)
	var err error
	switch cmd.Serialize {
	case SerializeJSON:
		dst = slices.Grow(dst, 8+jsonHeaderSizeHint(cmd)+len(cmd.Body))
		dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
		dst = appendJSONHeader(dst, cmd)
	case SerializeRocketMQ:
		size, serr := rocketMQHeaderSize(cmd)
		if serr != nil {
			return dst, serr
		}
		dst = slices.Grow(dst, 8+size+len(cmd.Body))
		dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
		dst, err = appendRocketMQHeader(dst, cmd)
	default:
		return dst, fmt.Errorf("unknown header serialization %d", byte(cmd.Serialize))
	}
	if err != nil {
		return dst[:start], err
	}
	headerLen := len(dst) - start - 8
	if headerLen > maxHeaderLen {
		return dst[:start], fmt.Errorf("%s header of %d bytes is longer than the %d a frame can carry", cmd.Serialize, headerLen, maxHeaderLen)
	}
	total := 4 + int64(headerLen) + int64(len(cmd.Body))
	if total > math.MaxInt32-4 {
		return dst[:start], fmt.Errorf("frame of %d bytes is too long", total+4)
	}
	dst = append(dst, cmd.Body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(total))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(cmd.Serialize)<<24|uint32(headerLen))
	return dst, nil
}

// checkFrameLengths validates a frame's length field and header-length word before
// anything is read or allocated. maxFrame limits the whole frame, prefix included.
func checkFrameLengths(total int32, word uint32, maxFrame int) error {
	if total < 4 {
		return fmt.Errorf("frame length %d is less than 4", total)
	}
	if int64(total)+4 > int64(maxFrame) {
		return fmt.Errorf("frame of %d bytes exceeds the maximum frame size %d", int64(total)+4, maxFrame)
	}
	if st := SerializeType(word >> 24); st != SerializeJSON && st != SerializeRocketMQ {
		return fmt.Errorf("unknown header serialization %d", byte(st))
	}
	if hl := int64(word & maxHeaderLen); hl > int64(total)-4 {
		return fmt.Errorf("header length %d exceeds the %d bytes that follow the header-length word", hl, int64(total)-4)
	}
	return nil
}

// decodeHeader decodes a header of serialization st into c.
func decodeHeader(st SerializeType, header string, c *Command) error {
	if st == SerializeRocketMQ {
		return decodeRocketMQHeader(header, c)
	}
	return decodeJSONHeader(header, c)
}

// DecodeFrame decodes one whole frame, length prefix included (what EncodeFrame
// produces). The length field must match len(frame)-4. The returned command's Body is
// nil when empty and otherwise slices into frame, which the caller must then leave
// unchanged. Errors are *FrameError.
func DecodeFrame(frame []byte) (*Command, error) {
	if len(frame) < 8 {
		return nil, &FrameError{Err: fmt.Errorf("frame of %d bytes is shorter than 8", len(frame))}
	}
	total := int32(binary.BigEndian.Uint32(frame))
	word := binary.BigEndian.Uint32(frame[4:])
	if err := checkFrameLengths(total, word, math.MaxInt32); err != nil {
		return nil, &FrameError{Err: err}
	}
	if int64(total) != int64(len(frame))-4 {
		return nil, &FrameError{Err: fmt.Errorf("length field %d does not match the %d bytes after it", total, len(frame)-4)}
	}
	hl := int(word & maxHeaderLen)
	cmd := &Command{Serialize: SerializeType(word >> 24)}
	if err := decodeHeader(cmd.Serialize, string(frame[8:8+hl]), cmd); err != nil {
		return nil, &FrameError{Err: err}
	}
	if len(frame) > 8+hl {
		cmd.Body = frame[8+hl : len(frame) : len(frame)]
	}
	return cmd, nil
}

// FrameReader reads commands from a stream of frames through a reused read buffer. It
// checks each frame's lengths before it reads or allocates anything for it, and the
// memory it holds for a frame grows with the bytes that actually arrived (in steps that
// at most double it), never to the length the frame announces before its bytes are
// there: a peer announcing 16 MiB and sending nothing costs nothing. The body of each
// command is its own allocation, which the caller may keep (a connection's read loop
// may instead read a response's body into a buffer the call's BodySource lends, of the
// announced size: see InvokeAsyncInto); headers are decoded from the buffer. A
// FrameReader is not safe for concurrent use.
//
// After an error Read returns the same error forever (a stream cannot be
// resynchronised after a bad frame), except a timeout of the underlying reader (a read
// deadline: a net.Error whose Timeout is true): the frame in progress is kept, and the
// next Read continues it.
type FrameReader struct {
	br       *bufio.Reader
	maxFrame int
	err      error

	// The frame in progress, once its 8 length bytes are read.
	inFrame bool
	st      SerializeType
	hl, bl  int
	cmd     *Command // set once the header is decoded
	part    []byte   // the header (when larger than the read buffer) or body read so far

	// bodyFor, when set, may lend the buffer a body of n bytes is read into, once the
	// header of its command is decoded: a buffer of length n, or nil to allocate one.
	// lent is that buffer, with its capacity, while the body is read into part: part
	// is it with the capacity clipped, so that fill reads no byte past the frame.
	bodyFor func(cmd *Command, n int) []byte
	lent    []byte
}

// frameChunk is the first allocation for a header or body larger than the read buffer;
// each further step at most doubles what is held, up to the frame's announced size.
const frameChunk = 64 << 10

// NewFrameReader returns a FrameReader reading r that refuses frames larger than
// maxFrameSize bytes (length prefix included); maxFrameSize <= 0 means
// DefaultMaxFrameSize.
func NewFrameReader(r io.Reader, maxFrameSize int) *FrameReader {
	if maxFrameSize <= 0 {
		maxFrameSize = DefaultMaxFrameSize
	}
	return &FrameReader{br: bufio.NewReaderSize(r, frameReadBufferSize), maxFrame: maxFrameSize}
}

// Read reads the next command. It returns io.EOF when the stream ends cleanly between
// frames, an error wrapping io.ErrUnexpectedEOF when it ends inside a frame, a
// *FrameError for a frame that breaks the protocol, and the underlying reader's error
// otherwise (a timeout among them, after which Read may be called again).
func (fr *FrameReader) Read() (*Command, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	cmd, err := fr.read()
	if err != nil && !isTimeout(err) {
		fr.err = err
		fr.part, fr.lent = nil, nil
	}
	return cmd, err
}

func (fr *FrameReader) read() (*Command, error) {
	if !fr.inFrame {
		p, err := fr.br.Peek(8)
		if err != nil {
			if errors.Is(err, io.EOF) && len(p) == 0 {
				return nil, io.EOF
			}
			return nil, readErr(err, len(p), 8)
		}
		total := int32(binary.BigEndian.Uint32(p))
		word := binary.BigEndian.Uint32(p[4:])
		if err := checkFrameLengths(total, word, fr.maxFrame); err != nil {
			return nil, &FrameError{Err: err}
		}
		_, _ = fr.br.Discard(8) // Peek returned 8 bytes, so Discard cannot fail
		fr.inFrame = true
		fr.st = SerializeType(word >> 24)
		fr.hl = int(word & maxHeaderLen)
		fr.bl = int(total) - 4 - fr.hl
	}
	if fr.cmd == nil {
		var header string
		if fr.hl <= fr.br.Size() {
			h, err := fr.br.Peek(fr.hl)
			if err != nil {
				return nil, readErr(err, len(h), fr.hl)
			}
			header = string(h)
			_, _ = fr.br.Discard(fr.hl)
		} else {
			if err := fr.fill(fr.hl); err != nil {
				return nil, err
			}
			header = string(fr.part)
			fr.part = nil
		}
		cmd := &Command{Serialize: fr.st}
		if err := decodeHeader(fr.st, header, cmd); err != nil {
			return nil, &FrameError{Err: err}
		}
		fr.cmd = cmd
		if fr.bodyFor != nil && fr.bl > 0 {
			if b := fr.bodyFor(cmd, fr.bl); len(b) == fr.bl {
				fr.lent, fr.part = b, b[:0:fr.bl] // fill reads into it and never grows it
			}
		}
	}
	if fr.bl > 0 {
		if err := fr.fill(fr.bl); err != nil {
			return nil, err
		}
		fr.cmd.Body = fr.part
		if fr.lent != nil {
			fr.cmd.Body = fr.lent // the lender's buffer as it was lent, capacity and all
		}
	}
	cmd := fr.cmd
	fr.inFrame, fr.cmd, fr.part, fr.lent = false, nil, nil, nil
	return cmd, nil
}

// fill reads into fr.part until it holds want bytes, allocating only for bytes that
// arrived: it waits for the first byte before the first allocation, and grows the
// buffer (at most doubling it) only when it is full and more bytes are due.
func (fr *FrameReader) fill(want int) error {
	for len(fr.part) < want {
		if len(fr.part) == cap(fr.part) {
			if fr.part == nil {
				if _, err := fr.br.Peek(1); err != nil {
					return readErr(err, 0, want)
				}
			}
			size := min(want, max(2*cap(fr.part), frameChunk))
			if fr.part == nil && want-frameChunk <= fr.br.Size() {
				size = want // a little more than a chunk: allocate it once
			}
			grown := make([]byte, len(fr.part), size)
			copy(grown, fr.part)
			fr.part = grown
		}
		n, err := fr.br.Read(fr.part[len(fr.part):cap(fr.part)])
		fr.part = fr.part[:len(fr.part)+n]
		if err != nil && len(fr.part) < want {
			return readErr(err, len(fr.part), want)
		}
	}
	return nil
}

// Ready reports whether a whole frame is buffered, so that Read returns without
// reading from the stream (an error already met counts as ready). A frame Read has
// begun and not finished is not ready.
func (fr *FrameReader) Ready() bool {
	if fr.err != nil {
		return true
	}
	if fr.inFrame {
		return false
	}
	n := fr.br.Buffered()
	if n < 4 {
		return false
	}
	p, _ := fr.br.Peek(4) // buffered: no read, no error
	total := int64(int32(binary.BigEndian.Uint32(p)))
	return total < 4 || int64(n) >= total+4 // a bad length is an error Read reports at once
}

// Partial reports whether a frame has begun arriving and is not complete: bytes of it
// are buffered or were read. got is what arrived of it so far and want its whole size
// (8 while its length is not known yet).
func (fr *FrameReader) Partial() (got, want int, partial bool) {
	if !fr.inFrame {
		n := fr.br.Buffered()
		return n, 8, n > 0
	}
	got = 8 + len(fr.part) + fr.br.Buffered()
	if fr.cmd != nil {
		got += fr.hl
	}
	return min(got, 8+fr.hl+fr.bl), 8 + fr.hl + fr.bl, true
}

// readErr describes a read that stopped after got of want bytes inside a frame. A
// timeout is returned as it is, so the caller can tell it and read again.
func readErr(err error, got, want int) error {
	if isTimeout(err) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("remoting: stream ended inside a frame (%d of %d bytes): %w", got, want, io.ErrUnexpectedEOF)
	}
	return err
}

// isTimeout reports whether err is a read or write deadline passing.
func isTimeout(err error) bool {
	if err == nil {
		return false // before errors.As, whose target would escape on every frame
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
