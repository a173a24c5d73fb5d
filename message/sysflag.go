package message

// Message sysFlag bits (Java's MessageSysFlag).
const (
	SysFlagCompressed           int32 = 0x1
	SysFlagMultiTags            int32 = 0x2
	SysFlagTransactionPrepared  int32 = 0x4
	SysFlagTransactionCommit    int32 = 0x8
	SysFlagTransactionRollback  int32 = 0xC
	SysFlagTransactionMask      int32 = 0xC
	SysFlagBornHostV6           int32 = 0x10
	SysFlagStoreHostV6          int32 = 0x20
	SysFlagNeedUnwrap           int32 = 0x40
	SysFlagInnerBatch           int32 = 0x80
	SysFlagCompressionTypeMask  int32 = 0x700
	sysFlagCompressionTypeShift       = 8
)

// Compression is the codec of a compressed body, from sysFlag bits 8-10.
type Compression int32

// Compression types. A compressed body with type bits 0 is zlib (old producers).
const (
	CompressionZlibDefault Compression = 0
	CompressionLZ4         Compression = 1
	CompressionZstd        Compression = 2
	CompressionZlib        Compression = 3
)

// CompressionOf returns the compression type encoded in a sysFlag.
func CompressionOf(sysFlag int32) Compression {
	return Compression((sysFlag & SysFlagCompressionTypeMask) >> sysFlagCompressionTypeShift)
}

// String returns the codec's name.
func (c Compression) String() string {
	switch c {
	case CompressionZlibDefault, CompressionZlib:
		return "zlib"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	default:
		return "unknown"
	}
}

// CompressionFlag returns the sysFlag bits of a body compressed with c: SysFlagCompressed
// and the codec in bits 8-10.
func CompressionFlag(c Compression) int32 {
	return SysFlagCompressed | int32(c)<<sysFlagCompressionTypeShift&SysFlagCompressionTypeMask
}

// known reports whether c is a codec Java knows (0-3).
func (c Compression) known() bool {
	return c >= CompressionZlibDefault && c <= CompressionZlib
}
