package message

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compressLevel is the level Java's producer uses for zlib and zstd
// (DefaultMQProducer.compressLevel, default 5).
const compressLevel = 5

// Compress compresses body with codec c as RocketMQ clients do, for a body to be sent or
// stored with CompressionFlag(c) in its sysFlag:
//   - zlib (CompressionZlib, or CompressionZlibDefault as old producers flag it): a zlib
//     stream (RFC 1950) at level 5, like Java's ZlibCompressor;
//   - LZ4 (CompressionLZ4): one LZ4 frame with 4 MiB independent blocks and no
//     checksums, the framing of lz4-java's LZ4FrameOutputStream that Java's
//     Lz4Compressor uses;
//   - zstd (CompressionZstd): one zstd frame at level 5.
//
// It builds a new compressor on every call: it serves tests and the fake broker, not a
// hot path.
func Compress(body []byte, c Compression) ([]byte, error) {
	var buf bytes.Buffer
	switch c {
	case CompressionZlibDefault, CompressionZlib:
		w, err := zlib.NewWriterLevel(&buf, compressLevel)
		if err != nil {
			return nil, errorf("zlib: %v", err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, errorf("zlib: %v", err)
		}
		if err := w.Close(); err != nil {
			return nil, errorf("zlib: %v", err)
		}
	case CompressionLZ4:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block4Mb), lz4.ChecksumOption(false),
			lz4.BlockChecksumOption(false), lz4.ConcurrencyOption(1)); err != nil {
			return nil, errorf("lz4: %v", err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, errorf("lz4: %v", err)
		}
		if err := w.Close(); err != nil {
			return nil, errorf("lz4: %v", err)
		}
	case CompressionZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(compressLevel)),
			zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, errorf("zstd: %v", err)
		}
		out := enc.EncodeAll(body, nil)
		if err := enc.Close(); err != nil {
			return nil, errorf("zstd: %v", err)
		}
		return out, nil
	default:
		return nil, errorf("unknown compression type %d", c)
	}
	return buf.Bytes(), nil
}

// zlibReader is a pooled zlib reader with the bytes.Reader it reads from.
type zlibReader struct {
	src bytes.Reader
	r   io.ReadCloser // a zlib.Resetter once made
}

// lz4Reader is a pooled LZ4 frame reader with the bytes.Reader it reads from.
type lz4Reader struct {
	src bytes.Reader
	r   *lz4.Reader
}

// inflate decompresses a stored body compressed with c, producing at most limit bytes
// (more is ErrSizeLimit). The result has its capacity clipped.
func (d *Decoder) inflate(st *decodeState, c Compression, src []byte, limit int) ([]byte, error) {
	var out []byte
	var err error
	switch c {
	case CompressionZlibDefault, CompressionZlib:
		out, err = d.inflateZlib(src, limit)
	case CompressionLZ4:
		out, err = d.inflateLZ4(src, limit)
	case CompressionZstd:
		out, err = d.inflateZstd(st, src, limit)
	default:
		return nil, fmt.Errorf("unknown compression type %d", c)
	}
	if err != nil {
		if errors.Is(err, ErrSizeLimit) || errors.Is(err, zstd.ErrDecoderSizeExceeded) ||
			errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, fmt.Errorf("%s body decompresses to more than the %d bytes the size limit leaves: %w", c, limit, ErrSizeLimit)
		}
		return nil, fmt.Errorf("%s body does not decompress: %w", c, err)
	}
	return out[:len(out):len(out)], nil
}

func (d *Decoder) inflateZlib(src []byte, limit int) ([]byte, error) {
	var zr *zlibReader
	if d != nil {
		zr, _ = d.zlibPool.Get().(*zlibReader)
	}
	if zr == nil {
		zr = new(zlibReader)
	}
	zr.src.Reset(src)
	var err error
	if rs, ok := zr.r.(zlib.Resetter); ok {
		err = rs.Reset(&zr.src, nil)
	} else {
		zr.r, err = zlib.NewReader(&zr.src)
	}
	if err != nil {
		return nil, err // a reader that failed its header is not pooled
	}
	out, err := readLimited(zr.r, 4*len(src), limit)
	zr.src.Reset(nil)
	if d != nil {
		d.zlibPool.Put(zr)
	}
	return out, err
}

func (d *Decoder) inflateLZ4(src []byte, limit int) ([]byte, error) {
	var lr *lz4Reader
	if d != nil {
		lr, _ = d.lz4Pool.Get().(*lz4Reader)
	}
	if lr == nil {
		lr = &lz4Reader{r: lz4.NewReader(nil)}
	}
	lr.src.Reset(src)
	lr.r.Reset(&lr.src)
	out, err := readLimited(lr.r, 4*len(src), limit)
	lr.src.Reset(nil)
	lr.r.Reset(nil) // returns its block buffer
	if d != nil {
		d.lz4Pool.Put(lr)
	}
	return out, err
}

func (d *Decoder) inflateZstd(st *decodeState, src []byte, limit int) ([]byte, error) {
	zd, err := d.zstdDecoder(st)
	if err != nil {
		return nil, err
	}
	out, err := zd.DecodeAll(src, nil)
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, ErrSizeLimit
	}
	return out, nil
}

// zstdDecoder returns the Decoder's zstd decoder, creating it on first use. Its output
// bound is the whole MaxDecodedSize; inflateZstd checks the remaining budget after.
// A nil Decoder makes one per decode call.
func (d *Decoder) zstdDecoder(st *decodeState) (*zstd.Decoder, error) {
	if d == nil {
		if st.zstd == nil {
			zd, err := newZstdDecoder(st.max, 1)
			if err != nil {
				return nil, err
			}
			st.zstd = zd
		}
		return st.zstd, nil
	}
	if zd := d.zstd.Load(); zd != nil {
		return zd, nil
	}
	zd, err := newZstdDecoder(st.max, 0)
	if err != nil {
		return nil, err
	}
	if !d.zstd.CompareAndSwap(nil, zd) {
		zd = d.zstd.Load() // another goroutine won; ours starts no goroutines and is dropped
	}
	return zd, nil
}

// newZstdDecoder makes a zstd decoder for DecodeAll only: created without a reader it
// starts no goroutines, and its DecodeAll is safe for concurrent use (concurrency 0
// allows GOMAXPROCS decodes at once).
func newZstdDecoder(max, concurrency int) (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderMaxMemory(uint64(max)),
		zstd.WithDecoderConcurrency(concurrency),
		zstd.WithDecoderLowmem(true))
}

// readLimited reads r to its end into a new buffer of at most limit bytes; a longer
// stream is ErrSizeLimit, without reading more than limit+1 bytes of it.
func readLimited(r io.Reader, hint, limit int) ([]byte, error) {
	hint = max(hint, 512)
	hint = min(hint, limit+1)
	buf := make([]byte, 0, hint)
	stalls := 0
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, ErrSizeLimit
			}
			buf = slices.Grow(buf, min(cap(buf), limit+1-len(buf))) // double, but not past limit+1
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return nil, ErrSizeLimit
		}
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, err
		case n == 0:
			if stalls++; stalls > 100 {
				return nil, io.ErrNoProgress
			}
		default:
			stalls = 0
		}
	}
}
