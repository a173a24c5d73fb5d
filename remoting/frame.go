package remoting

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
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
// checks each frame's lengths before it reads or allocates anything for it. The body of
// each command is its own allocation, which the caller may keep; headers are decoded from
// the buffer. A FrameReader is not safe for concurrent use. After an error it returns the
// same error forever: a stream cannot be resynchronised after a bad frame.
type FrameReader struct {
	br       *bufio.Reader
	maxFrame int
	scratch  []byte // headers larger than the read buffer
	err      error
}

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
// otherwise.
func (fr *FrameReader) Read() (*Command, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	cmd, err := fr.read()
	if err != nil {
		fr.err = err
	}
	return cmd, err
}

func (fr *FrameReader) read() (*Command, error) {
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
	hl := int(word & maxHeaderLen)
	bl := int(total) - 4 - hl
	cmd := &Command{Serialize: SerializeType(word >> 24)}

	var header string
	if hl <= fr.br.Size() {
		h, err := fr.br.Peek(hl)
		if err != nil {
			return nil, readErr(err, len(h), hl)
		}
		header = string(h)
		_, _ = fr.br.Discard(hl)
	} else {
		if cap(fr.scratch) < hl {
			fr.scratch = make([]byte, hl)
		}
		h := fr.scratch[:hl]
		if n, err := io.ReadFull(fr.br, h); err != nil {
			return nil, readErr(err, n, hl)
		}
		header = string(h)
	}
	if err := decodeHeader(cmd.Serialize, header, cmd); err != nil {
		return nil, &FrameError{Err: err}
	}
	if bl > 0 {
		body := make([]byte, bl)
		if n, err := io.ReadFull(fr.br, body); err != nil {
			return nil, readErr(err, n, bl)
		}
		cmd.Body = body
	}
	return cmd, nil
}

// Ready reports whether a whole frame is buffered, so that Read returns without
// reading from the stream (an error already met counts as ready).
func (fr *FrameReader) Ready() bool {
	if fr.err != nil {
		return true
	}
	n := fr.br.Buffered()
	if n < 4 {
		return false
	}
	p, _ := fr.br.Peek(4) // buffered: no read, no error
	total := int64(int32(binary.BigEndian.Uint32(p)))
	return total < 4 || int64(n) >= total+4 // a bad length is an error Read reports at once
}

// readErr describes a read that stopped after got of want bytes inside a frame.
func readErr(err error, got, want int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("remoting: stream ended inside a frame (%d of %d bytes): %w", got, want, io.ErrUnexpectedEOF)
	}
	return err
}
