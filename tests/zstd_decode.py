"""Small pure-Python Zstandard decompressor (RFC 8878), for test suites only.

Standard library only, Python 3.10+.  It decodes what libzstd-based encoders
emit *without* a dictionary, and verifies the content checksum when present.
It is slow next to libzstd (a few MB/s), which is fine for test data.

Public API
    decompress(data, max_output=None) -> bytes   all frames, skippable skipped
    ZstdDecompressor                   tiny stand-in for zstandard's class:
        .stream_reader(fileobj)        readable, context manager, .read(size)
        .decompressobj()               .decompress(data) -> bytes (one frame)
        .decompress(data)              first frame, as zstandard does
    ZstdError                          subclass of ValueError, raised on any
                                       malformed input or on max_output

Map of the format (RFC 8878 section -> function)
    3.1           frames, magic numbers ............ decompress()
    3.1.1         Zstandard frame, Content_Checksum  _decode_frame()
    3.1.1.1       frame header ..................... _parse_frame_header()
    3.1.1.2       blocks (Raw / RLE / Compressed) .. _decode_frame()
    3.1.1.3       compressed block ................. _decode_compressed_block()
    3.1.1.3.1     literals section ................. _decode_literals()
    3.1.1.3.1.6   jump table, 4 streams ............ _huffman_literals()
    3.1.1.3.2     sequences section header ......... _decode_sequences()
    3.1.1.3.2.1   symbol compression modes ......... _select_table()
    3.1.1.3.2.1.1 length / offset codes ............ _LL_CODES, _ML_CODES
    3.1.1.3.2.2   default distributions ............ _LL_DEFAULT etc.
    3.1.1.4       sequence execution ............... _run_sequences()
    3.1.1.5       repeat offsets ................... _run_sequences()
    3.1.2         skippable frames ................. decompress()
    4.1.1         FSE table description ............ _read_fse_distribution()
    4.1           FSE decoding table ............... _build_fse_table()
    4.2.1         Huffman tree description ......... _read_huffman_table()
    4.2.1.2       FSE-compressed Huffman weights ... _decode_huffman_weights()
    4.2.1.3       weights -> prefix codes .......... _build_huffman_table()
    4.2.2         Huffman-coded streams ............ _huffman_stream()
    (xxHash64)    content checksum ................. _xxh64()

Backward bitstreams (FSE, Huffman, sequences) are read with a small integer
"window" that is refilled 32 bytes at a time from a copy of the stream with
16 zero bytes in front, so that reading past the start yields zeros and is
caught by the "stream fully consumed" check at the end.
"""

from __future__ import annotations

import io
import struct
import sys

__all__ = ["decompress", "ZstdDecompressor", "ZstdError"]


class ZstdError(ValueError):
    """Malformed Zstandard data, unsupported feature, or output too large."""


_MAGIC = 0xFD2FB528
_SKIPPABLE_MAGIC = 0x184D2A50      # low 4 bits are free (3.1.2)
_BLOCK_SIZE_MAX = 128 * 1024       # 3.1.1.2.4
_PAD = bytes(16)                   # zeros put before a backward bitstream
_PAD_BITS = 8 * len(_PAD)


def _corrupt(msg: str) -> ZstdError:
    return ZstdError("malformed zstd data: " + msg)


# ---------------------------------------------------------------------------
# Frames and blocks (3.1, 3.1.1, 3.1.1.1, 3.1.1.2, 3.1.2)
# ---------------------------------------------------------------------------

def decompress(data: bytes, max_output: int | None = None) -> bytes:
    """Decode every frame in ``data`` and return the concatenated output.

    Skippable frames are skipped.  Raises ZstdError (a ValueError) on
    malformed input, on a dictionary frame, or when the output would exceed
    ``max_output`` bytes.
    """
    data = bytes(data)
    limit = sys.maxsize if max_output is None else max_output
    if not data:
        raise _corrupt("empty input, no frame")
    out = bytearray()
    pos, n = 0, len(data)
    try:
        while pos < n:
            if pos + 4 > n:
                raise _corrupt("truncated magic number")
            magic = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
            if magic == _MAGIC:
                pos = _decode_frame(data, pos, out, limit)
            elif magic & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:  # 3.1.2
                if pos + 4 > n:
                    raise _corrupt("truncated skippable frame")
                pos += 4 + int.from_bytes(data[pos:pos + 4], "little")
                if pos > n:
                    raise _corrupt("truncated skippable frame")
            else:
                raise _corrupt("bad magic number 0x%08X" % magic)
    except (IndexError, KeyError, struct.error, OverflowError) as exc:
        # Safety net: every known bad input is reported above; this only
        # guarantees callers never see another exception type.
        raise _corrupt("internal error %r" % exc) from exc
    return bytes(out)


class _FrameState:
    """What persists from block to block inside one frame."""

    __slots__ = ("start", "window", "block_max", "rep", "huffman", "tables")

    def __init__(self, start: int, window: int):
        self.start = start                  # offset of the frame's output
        self.window = window
        self.block_max = min(window, _BLOCK_SIZE_MAX)
        self.rep = [1, 4, 8]                # 3.1.1.5 initial repeat offsets
        self.huffman = None                 # for Treeless literals
        self.tables = {"ll": None, "of": None, "ml": None}  # Repeat_Mode


def _parse_frame_header(data: bytes, pos: int):
    """3.1.1.1: return (pos, window_size, content_size | None, checksum)."""
    if pos >= len(data):
        raise _corrupt("truncated frame header")
    fhd = data[pos]
    pos += 1
    single = (fhd >> 5) & 1
    if fhd & 0x08:
        raise _corrupt("reserved bit set in frame header")
    did_size = (0, 1, 2, 4)[fhd & 3]
    fcs_size = (single, 2, 4, 8)[fhd >> 6]
    if pos + (1 - single) + did_size + fcs_size > len(data):
        raise _corrupt("truncated frame header")
    window = 0
    if not single:                           # 3.1.1.1.2 Window_Descriptor
        wd = data[pos]
        pos += 1
        base = 1 << (10 + (wd >> 3))
        window = base + (base >> 3) * (wd & 7)
    if did_size:                             # 3.1.1.1.3 Dictionary_ID
        if int.from_bytes(data[pos:pos + did_size], "little"):
            raise ZstdError("zstd dictionary not supported")
        pos += did_size
    content_size = None
    if fcs_size:                             # 3.1.1.1.4 Frame_Content_Size
        content_size = int.from_bytes(data[pos:pos + fcs_size], "little")
        content_size += 256 if fcs_size == 2 else 0
        pos += fcs_size
    if single:
        window = content_size
    return pos, window, content_size, bool(fhd & 0x04)


def _decode_frame(data: bytes, pos: int, out: bytearray, limit: int) -> int:
    """3.1.1: decode one frame (after its magic) into ``out``; return pos."""
    pos, window, content_size, has_checksum = _parse_frame_header(data, pos)
    start = len(out)
    if content_size is not None and start + content_size > limit:
        raise ZstdError("zstd output would exceed max_output")
    st = _FrameState(start, window)
    n = len(data)
    last = 0
    while not last:                          # 3.1.1.2 blocks
        if pos + 3 > n:
            raise _corrupt("truncated block header")
        header = int.from_bytes(data[pos:pos + 3], "little")
        pos += 3
        last, btype, size = header & 1, (header >> 1) & 3, header >> 3
        if btype == 3:
            raise _corrupt("reserved block type")
        if size > (st.block_max if btype < 2 else _BLOCK_SIZE_MAX):
            raise _corrupt("block larger than Block_Maximum_Size")
        if pos + (1 if btype == 1 else size) > n:
            raise _corrupt("truncated block")
        if btype == 0:                       # Raw_Block
            _check_limit(len(out) + size, limit)
            out += data[pos:pos + size]
            pos += size
        elif btype == 1:                     # RLE_Block
            _check_limit(len(out) + size, limit)
            out += data[pos:pos + 1] * size
            pos += 1
        else:                                # Compressed_Block
            _decode_compressed_block(data, pos, pos + size, out, st, limit)
            pos += size
    if content_size is not None and len(out) - start != content_size:
        raise _corrupt("frame content size mismatch")
    if has_checksum:                         # 3.1.1 Content_Checksum
        if pos + 4 > n:
            raise _corrupt("truncated content checksum")
        expected = int.from_bytes(data[pos:pos + 4], "little")
        if _xxh64(memoryview(out)[start:]) & 0xFFFFFFFF != expected:
            raise _corrupt("content checksum mismatch")
        pos += 4
    return pos


def _check_limit(size: int, limit: int) -> None:
    if size > limit:
        raise ZstdError("zstd output would exceed max_output")


def _decode_compressed_block(data, pos, end, out, st, limit) -> None:
    """3.1.1.3: Literals_Section, then Sequences_Section (executed)."""
    literals, pos = _decode_literals(data, pos, end, st)
    _decode_sequences(data, pos, end, literals, out, st, limit)


# ---------------------------------------------------------------------------
# Literals section (3.1.1.3.1) and Huffman coding (4.2)
# ---------------------------------------------------------------------------

def _decode_literals(data, pos, end, st):
    """3.1.1.3.1: return (literals, pos after the literals section)."""
    if pos >= end:
        raise _corrupt("truncated literals section")
    b0 = data[pos]
    ltype, sf = b0 & 3, (b0 >> 2) & 3
    if ltype < 2:                            # Raw or RLE literals
        hsize = (1, 2, 1, 3)[sf]
        if pos + hsize > end:
            raise _corrupt("truncated literals header")
        h = int.from_bytes(data[pos:pos + hsize], "little")
        size = h >> (3 if hsize == 1 else 4)
        pos += hsize
        if size > _BLOCK_SIZE_MAX:
            raise _corrupt("literals larger than a block")
        if ltype == 0:
            if pos + size > end:
                raise _corrupt("truncated raw literals")
            return data[pos:pos + size], pos + size
        if pos >= end:
            raise _corrupt("truncated RLE literals")
        return data[pos:pos + 1] * size, pos + 1
    # Compressed (2) or Treeless (3) literals: sizes of 10, 10, 14, 18 bits
    hsize, bits = ((3, 10), (3, 10), (4, 14), (5, 18))[sf]
    if pos + hsize > end:
        raise _corrupt("truncated literals header")
    h = int.from_bytes(data[pos:pos + hsize], "little")
    mask = (1 << bits) - 1
    regen, csize = (h >> 4) & mask, (h >> (4 + bits)) & mask
    pos += hsize
    if regen > _BLOCK_SIZE_MAX:
        raise _corrupt("literals larger than a block")
    cend = pos + csize
    if cend > end:
        raise _corrupt("truncated compressed literals")
    if ltype == 2:                           # tree description present
        st.huffman, pos = _read_huffman_table(data, pos, cend)
    elif st.huffman is None:
        raise _corrupt("treeless literals without a previous Huffman table")
    lits = _huffman_literals(st.huffman, data[pos:cend], regen, sf != 0)
    return lits, cend


def _huffman_literals(table, src: bytes, regen: int, four: bool):
    """3.1.1.3.1.6 / 4.2.2: decode 1 stream, or 4 streams after a jump table."""
    if not four:
        return _huffman_stream(table, src, regen)
    if len(src) < 6:
        raise _corrupt("truncated jump table")
    s1, s2, s3 = struct.unpack_from("<3H", src, 0)
    e1, e2, e3 = 6 + s1, 6 + s1 + s2, 6 + s1 + s2 + s3
    seg = (regen + 3) // 4
    if e3 > len(src) or regen - 3 * seg < 0:
        raise _corrupt("bad jump table")
    out = _huffman_stream(table, src[6:e1], seg)
    out += _huffman_stream(table, src[e1:e2], seg)
    out += _huffman_stream(table, src[e2:e3], seg)
    out += _huffman_stream(table, src[e3:], regen - 3 * seg)
    return out


def _read_huffman_table(data, pos, end):
    """4.2.1: read a Huffman tree description; return (table, pos)."""
    if pos >= end:
        raise _corrupt("truncated Huffman tree description")
    header = data[pos]
    pos += 1
    if header < 128:                         # FSE-compressed weights
        if pos + header > end:
            raise _corrupt("truncated Huffman weights")
        weights = _decode_huffman_weights(data[pos:pos + header])
        pos += header
    else:                                    # 4-bit direct weights
        count = header - 127
        nbytes = (count + 1) // 2
        if pos + nbytes > end:
            raise _corrupt("truncated Huffman weights")
        weights = []
        for b in data[pos:pos + nbytes]:
            weights += (b >> 4, b & 15)
        del weights[count:]
        pos += nbytes
    return _build_huffman_table(weights), pos


def _decode_huffman_weights(src: bytes) -> list:
    """4.2.1.2: weights coded with FSE (2 interleaved states, log <= 6)."""
    probs, log, hsize = _read_fse_distribution(src, 0, len(src), 6, 12)
    syms, nbits, base = _build_fse_table(probs, log)
    c, r = _backward_bits(src[hsize:])
    if r < 2 * log:                          # need both initial states
        raise _corrupt("truncated Huffman weights stream")
    # r counts unread bits; reading past the start pulls in zero bits
    c <<= 64
    r += 64
    mask = (1 << log) - 1
    r -= log
    s1 = (c >> r) & mask
    r -= log
    s2 = (c >> r) & mask
    weights = []
    while len(weights) < 255:
        weights.append(syms[s1])             # State1: even symbols
        n = nbits[s1]
        r -= n
        s1 = base[s1] + ((c >> r) & ((1 << n) - 1))
        if r < 64:                           # overflow: emit State2, done
            weights.append(syms[s2])
            return weights
        weights.append(syms[s2])             # State2: odd symbols
        n = nbits[s2]
        r -= n
        s2 = base[s2] + ((c >> r) & ((1 << n) - 1))
        if r < 64:
            weights.append(syms[s1])
            return weights
    raise _corrupt("too many Huffman weights")


def _build_huffman_table(weights: list):
    """4.2.1.3: weights -> (symbol by prefix, bits by prefix, max_bits)."""
    if len(weights) > 255:
        raise _corrupt("too many Huffman weights")
    total = 0
    for w in weights:
        if w > 11:
            raise _corrupt("Huffman weight too large")
        if w:
            total += 1 << (w - 1)
    if total == 0:
        raise _corrupt("all Huffman weights are zero")
    max_bits = total.bit_length()
    left = (1 << max_bits) - total
    if max_bits > 11 or left & (left - 1):
        raise _corrupt("bad Huffman weights")
    weights = weights + [left.bit_length()]  # implied last weight
    # Codes of weight w start after all codes of smaller weights; within a
    # weight, symbols come in increasing order.  A code of weight w fills
    # 2**(w-1) slots of the 2**max_bits table indexed by the next max_bits.
    start = [0] * (max_bits + 2)
    for w in weights:
        if w:
            start[w + 1] += 1 << (w - 1)
    for w in range(1, max_bits + 2):
        start[w] += start[w - 1]
    size = 1 << max_bits
    syms, nbits = bytearray(size), bytearray(size)
    for s, w in enumerate(weights):
        if w:
            p, k = start[w], 1 << (w - 1)
            syms[p:p + k] = bytes((s,)) * k
            nbits[p:p + k] = bytes((max_bits + 1 - w,)) * k
            start[w] = p + k
    return syms, nbits, max_bits


def _huffman_stream(table, src: bytes, count: int) -> bytearray:
    """4.2.2: decode ``count`` symbols from one backward Huffman stream."""
    syms, nbits, mb = table
    if not src or src[-1] == 0:
        raise _corrupt("bad Huffman stream padding")
    buf = _PAD + src
    off = 8 * len(buf) - 9 + src[-1].bit_length()   # drop the end marker
    out = bytearray(count)
    mask = (1 << mb) - 1
    i = 0
    while i < count:
        if off < _PAD_BITS:
            raise _corrupt("Huffman stream overrun")
        hi = (off + 7) >> 3
        lo = hi - 32 if hi > 32 else 0
        c = int.from_bytes(buf[lo:hi], "little")
        r = off - 8 * lo                     # valid bits in c
        k = min(count - i, r // mb)          # symbols safe without refill
        for j in range(i, i + k):
            e = (c >> (r - mb)) & mask       # peek max_bits bits
            out[j] = syms[e]
            r -= nbits[e]
        i += k
        off = 8 * lo + r
    if off != _PAD_BITS:
        raise _corrupt("Huffman stream not fully consumed")
    return out


def _backward_bits(src: bytes):
    """Whole backward bitstream as (int, number of useful bits) (4.1, 4.2.2).

    Only for short streams (Huffman weights); long ones are read in pieces.
    """
    if not src or src[-1] == 0:
        raise _corrupt("bad bitstream padding")
    return int.from_bytes(src, "little"), 8 * len(src) - 9 + src[-1].bit_length()


# ---------------------------------------------------------------------------
# FSE (4.1)
# ---------------------------------------------------------------------------

def _read_fse_distribution(data, pos, end, max_log, max_symbol):
    """4.1.1: read an FSE table description; return (probs, log, pos)."""
    chunk = data[pos:min(end, pos + 512)]
    v = int.from_bytes(chunk, "little")
    log = (v & 15) + 5
    bp = 4
    if log > max_log:
        raise _corrupt("FSE accuracy log too large")
    remaining = 1 << log
    probs = []
    while remaining > 0:
        if len(probs) > max_symbol:
            raise _corrupt("too many FSE symbols")
        bits = (remaining + 1).bit_length()  # values 0..remaining+1
        val = (v >> bp) & ((1 << bits) - 1)
        low_mask = (1 << (bits - 1)) - 1
        threshold = (1 << bits) - 1 - (remaining + 1)
        if val & low_mask < threshold:       # small values use bits-1 bits
            val &= low_mask
            bp += bits - 1
        else:
            if val > low_mask:
                val -= threshold
            bp += bits
        prob = val - 1                       # -1 means "less than 1"
        remaining -= abs(prob)
        probs.append(prob)
        if prob == 0:                        # 2-bit repeat flags of zeros
            while True:
                repeat = (v >> bp) & 3
                bp += 2
                probs += [0] * repeat
                if repeat != 3 or len(probs) > max_symbol + 1:
                    break
    if remaining != 0 or len(probs) > max_symbol + 1:
        raise _corrupt("bad FSE distribution")
    if bp > 8 * len(chunk):
        raise _corrupt("truncated FSE table description")
    return probs, log, pos + (bp + 7) // 8


def _build_fse_table(probs: list, log: int):
    """4.1: decoding table as (symbol, number of bits, baseline) by state."""
    size = 1 << log
    syms = [0] * size
    high = size - 1
    nxt = []
    for s, p in enumerate(probs):            # "less than 1" go at the end
        if p == -1:
            syms[high] = s
            high -= 1
        nxt.append(1 if p == -1 else p)
    step, mask, pos = (size >> 1) + (size >> 3) + 3, size - 1, 0
    for s, p in enumerate(probs):
        for _ in range(p):
            syms[pos] = s
            pos = (pos + step) & mask
            while pos > high:
                pos = (pos + step) & mask
    if pos != 0:
        raise _corrupt("bad FSE distribution")
    nbits, base = [0] * size, [0] * size
    for u in range(size):
        x = nxt[syms[u]]
        nxt[syms[u]] = x + 1
        nb = log + 1 - x.bit_length()
        nbits[u] = nb
        base[u] = (x << nb) - size
    return syms, nbits, base


# ---------------------------------------------------------------------------
# Sequences (3.1.1.3.2, 3.1.1.4, 3.1.1.5)
# ---------------------------------------------------------------------------

def _codes(spec):
    """Expand [(baseline, extra bits, how many consecutive codes)]."""
    table = []
    for baseline, bits, count in spec:
        for i in range(count):
            table.append((baseline + (i << bits), bits))
    return table


# 3.1.1.3.2.1.1: (baseline, number of extra bits) for each code
_LL_CODES = _codes([(0, 0, 16), (16, 1, 4), (24, 2, 2), (32, 3, 2),
                    (48, 4, 1), (64, 6, 1), (128, 7, 1), (256, 8, 1),
                    (512, 9, 1), (1024, 10, 1), (2048, 11, 1), (4096, 12, 1),
                    (8192, 13, 1), (16384, 14, 1), (32768, 15, 1),
                    (65536, 16, 1)])
_ML_CODES = _codes([(3, 0, 32), (35, 1, 4), (43, 2, 2), (51, 3, 2),
                    (67, 4, 2), (99, 5, 1), (131, 7, 1), (259, 8, 1),
                    (515, 9, 1), (1027, 10, 1), (2051, 11, 1), (4099, 12, 1),
                    (8195, 13, 1), (16387, 14, 1), (32771, 15, 1),
                    (65539, 16, 1)])
_OF_CODES = [(1 << n, n) for n in range(32)]   # Offset_Value = 2**N + bits

# 3.1.1.3.2.2: default distributions
_LL_DEFAULT = ([4, 3] + [2] * 11 + [1] * 3 + [2] * 9 + [3, 2] + [1] * 5
               + [-1] * 4, 6)
_ML_DEFAULT = ([1, 4, 3] + [2] * 6 + [1] * 37 + [-1] * 7, 6)
_OF_DEFAULT = ([1] * 6 + [2] * 3 + [1] * 15 + [-1] * 5, 5)

_KINDS = {  # kind: (codes, max accuracy log, default distribution)
    "ll": (_LL_CODES, 9, _LL_DEFAULT),
    "of": (_OF_CODES, 8, _OF_DEFAULT),
    "ml": (_ML_CODES, 9, _ML_DEFAULT),
}


def _seq_table(kind: str, syms, nbits, base, log: int):
    """Decoding table for one sequence field: per state, the FSE update
    (nbits, base) and the code's (value baseline, extra bits)."""
    codes = _KINDS[kind][0]
    return (nbits, base, [codes[s][0] for s in syms],
            [codes[s][1] for s in syms], log)


_DEFAULT_TABLES = {kind: _seq_table(kind, *_build_fse_table(*spec[2]),
                                    spec[2][1])
                   for kind, spec in _KINDS.items()}


def _select_table(data, pos, end, mode, kind, st):
    """3.1.1.3.2.1: pick the table for one field by its compression mode."""
    codes, max_log, _ = _KINDS[kind]
    if mode == 0:                            # Predefined_Mode
        table = _DEFAULT_TABLES[kind]
    elif mode == 1:                          # RLE_Mode: one symbol, 0 bits
        if pos >= end or data[pos] >= len(codes):
            raise _corrupt("bad RLE sequence symbol")
        table = _seq_table(kind, [data[pos]], [0], [0], 0)
        pos += 1
    elif mode == 2:                          # FSE_Compressed_Mode
        probs, log, pos = _read_fse_distribution(data, pos, end, max_log,
                                                 len(codes) - 1)
        table = _seq_table(kind, *_build_fse_table(probs, log), log)
    else:                                    # Repeat_Mode
        table = st.tables[kind]
        if table is None:
            raise _corrupt("repeat mode without a previous table")
    st.tables[kind] = table
    return table, pos


def _decode_sequences(data, pos, end, lits, out, st, limit) -> None:
    """3.1.1.3.2: read the sequences header and tables, then execute."""
    if pos >= end:
        raise _corrupt("missing sequences section")
    nseq = data[pos]
    pos += 1
    if nseq >= 128:
        extra = 2 if nseq == 255 else 1
        if pos + extra > end:
            raise _corrupt("truncated sequences header")
        if nseq == 255:
            nseq = data[pos] + (data[pos + 1] << 8) + 0x7F00
        else:
            nseq = ((nseq - 128) << 8) + data[pos]
        pos += extra
    block_limit = min(len(out) + st.block_max, limit)
    if nseq == 0:                            # literals only
        if pos != end:
            raise _corrupt("data after an empty sequences section")
        _check_block(len(out) + len(lits), block_limit, limit)
        out += lits
        return
    if pos >= end:
        raise _corrupt("truncated sequences header")
    modes = data[pos]
    pos += 1
    if modes & 3:
        raise _corrupt("reserved bits set in compression modes")
    ll, pos = _select_table(data, pos, end, modes >> 6, "ll", st)
    of, pos = _select_table(data, pos, end, (modes >> 4) & 3, "of", st)
    ml, pos = _select_table(data, pos, end, (modes >> 2) & 3, "ml", st)
    _run_sequences(data[pos:end], nseq, lits, out, st, (ll, of, ml),
                   block_limit, limit)


def _check_block(size, block_limit, limit):
    if size > block_limit:
        _check_limit(size, limit)
        raise _corrupt("block output larger than Block_Maximum_Size")


def _run_sequences(src, nseq, lits, out, st, tables, block_limit, limit):
    """Decode the sequences bitstream (3.1.1.3.2) and execute each sequence
    at once (3.1.1.4), tracking the repeat offsets (3.1.1.5)."""
    (ll_nb, ll_base, ll_val, ll_xb, ll_log), \
        (of_nb, of_base, of_val, of_xb, of_log), \
        (ml_nb, ml_base, ml_val, ml_xb, ml_log) = tables
    if not src or src[-1] == 0:
        raise _corrupt("bad sequences bitstream padding")
    buf = _PAD + src
    off = 8 * len(buf) - 9 + src[-1].bit_length()
    # c holds stream bits [lo8, lo8 + r); the next bits to read are the top.
    # Kept as one loop (no helper calls per field) because it is the hot path.

    def refill(off):
        if off < _PAD_BITS:
            raise _corrupt("sequences bitstream overrun")
        hi = (off + 7) >> 3
        lo = hi - 32 if hi > 32 else 0
        return int.from_bytes(buf[lo:hi], "little"), 8 * lo, off - 8 * lo

    c, lo8, r = refill(off)
    r -= ll_log                              # initial states: LL, OF, ML
    lls = (c >> r) & ((1 << ll_log) - 1)
    r -= of_log
    ofs = (c >> r) & ((1 << of_log) - 1)
    r -= ml_log
    mls = (c >> r) & ((1 << ml_log) - 1)
    rep1, rep2, rep3 = st.rep
    lp, nlits = 0, len(lits)
    start, window = st.start, st.window
    last = nseq - 1
    for i in range(nseq):
        if r < 128:                          # one sequence reads <= 89 bits
            c, lo8, r = refill(lo8 + r)
        n = of_xb[ofs]                       # extra bits: OF, ML, then LL
        r -= n
        ov = of_val[ofs] + ((c >> r) & ((1 << n) - 1))
        n = ml_xb[mls]
        r -= n
        mlen = ml_val[mls] + ((c >> r) & ((1 << n) - 1))
        n = ll_xb[lls]
        r -= n
        llen = ll_val[lls] + ((c >> r) & ((1 << n) - 1))
        if ov > 3:                           # 3.1.1.5 repeat offsets
            offset, rep3, rep2, rep1 = ov - 3, rep2, rep1, ov - 3
        else:
            if llen == 0:
                ov += 1
            if ov == 1:
                offset = rep1
            elif ov == 2:
                offset, rep2, rep1 = rep2, rep1, rep2
            else:
                offset = rep3 if ov == 3 else rep1 - 1
                rep3, rep2, rep1 = rep2, rep1, offset
        if i != last:                        # state updates: LL, ML, OF
            n = ll_nb[lls]
            r -= n
            lls = ll_base[lls] + ((c >> r) & ((1 << n) - 1))
            n = ml_nb[mls]
            r -= n
            mls = ml_base[mls] + ((c >> r) & ((1 << n) - 1))
            n = of_nb[ofs]
            r -= n
            ofs = of_base[ofs] + ((c >> r) & ((1 << n) - 1))
        if llen:                             # 3.1.1.4 execution
            e = lp + llen
            if e > nlits:
                raise _corrupt("sequence needs more literals than decoded")
            out += lits[lp:e]
            lp = e
        pos = len(out)
        if offset > pos - start or offset > window or offset == 0:
            raise _corrupt("bad match offset (0 or beyond the window)")
        s = pos - offset
        if mlen <= offset:
            out += out[s:s + mlen]
        else:                                # overlapping copy repeats
            seg = out[s:]
            q, m = divmod(mlen, offset)
            out += seg * q + seg[:m]
        if len(out) > block_limit:
            _check_block(len(out), block_limit, limit)
    if lo8 + r != _PAD_BITS:
        raise _corrupt("sequences bitstream not fully consumed")
    _check_block(len(out) + nlits - lp, block_limit, limit)
    out += lits[lp:]
    st.rep = [rep1, rep2, rep3]


# ---------------------------------------------------------------------------
# XXH64 (content checksum: low 32 bits of XXH64 with seed 0, 3.1.1)
# ---------------------------------------------------------------------------

_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_M64 = (1 << 64) - 1


def _xxh64(data, seed: int = 0) -> int:
    """xxHash64 of a bytes-like object."""
    n = len(data)
    p = n - n % 32
    P1, P2, M = _P1, _P2, _M64
    if n >= 32:
        v1, v2 = (seed + P1 + P2) & M, (seed + P2) & M
        v3, v4 = seed, (seed - P1) & M
        # rotl(x, 31) * P1 needs no mask before the multiply: bits above
        # 64 only reach product bits above 64, which are masked off.
        for a, b, c, d in struct.iter_unpack("<4Q", data[:p]):
            v1 = (v1 + a * P2) & M
            v1 = ((v1 << 31 | v1 >> 33) * P1) & M
            v2 = (v2 + b * P2) & M
            v2 = ((v2 << 31 | v2 >> 33) * P1) & M
            v3 = (v3 + c * P2) & M
            v3 = ((v3 << 31 | v3 >> 33) * P1) & M
            v4 = (v4 + d * P2) & M
            v4 = ((v4 << 31 | v4 >> 33) * P1) & M
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & M
        for v in (v1, v2, v3, v4):
            h = ((h ^ _xxh_round(v)) * P1 + _P4) & M
    else:
        h = (seed + _P5) & M
    h = (h + n) & M
    while p + 8 <= n:
        k = int.from_bytes(data[p:p + 8], "little")
        h = (_rotl(h ^ _xxh_round(k), 27) * P1 + _P4) & M
        p += 8
    if p + 4 <= n:
        k = int.from_bytes(data[p:p + 4], "little")
        h = (_rotl(h ^ (k * P1 & M), 23) * P2 + _P3) & M
        p += 4
    while p < n:
        h = (_rotl(h ^ (data[p] * _P5 & M), 11) * P1) & M
        p += 1
    h ^= h >> 33                             # avalanche
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * _P3) & M
    return h ^ (h >> 32)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _xxh_round(lane: int) -> int:
    return (_rotl((lane * _P2) & _M64, 31) * _P1) & _M64


# ---------------------------------------------------------------------------
# Minimal stand-in for the `zstandard` package's decompressor
# ---------------------------------------------------------------------------

def _frame_end(buf) -> int | None:
    """End offset of the first frame in buf, or None if it is incomplete."""
    if len(buf) < 5:
        return None
    magic = int.from_bytes(buf[:4], "little")
    if magic & 0xFFFFFFF0 == _SKIPPABLE_MAGIC:
        end = 8 + int.from_bytes(buf[4:8], "little")
        return end if len(buf) >= 8 and end <= len(buf) else None
    if magic != _MAGIC:
        raise _corrupt("bad magic number 0x%08X" % magic)
    fhd = buf[4]
    single = (fhd >> 5) & 1
    pos = 5 + (1 - single) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
    while pos + 3 <= len(buf):               # walk the block headers
        header = int.from_bytes(buf[pos:pos + 3], "little")
        btype = (header >> 1) & 3
        if btype == 3:
            raise _corrupt("reserved block type")
        pos += 3 + (1 if btype == 1 else header >> 3)
        if header & 1:
            pos += 4 if fhd & 0x04 else 0
            return pos if pos <= len(buf) else None
    return None


class ZstdDecompressor:
    """Tiny subset of ``zstandard.ZstdDecompressor`` (no dictionaries)."""

    def __init__(self, dict_data=None, max_window_size=0, format=0):
        if dict_data is not None:
            raise ZstdError("zstd dictionary not supported")

    def decompress(self, data, max_output_size=0, read_across_frames=False,
                   allow_extra_data=True) -> bytes:
        """Decode the first frame, like zstandard: its header must give the
        content size unless ``max_output_size`` is set."""
        data = bytes(data)
        if read_across_frames:
            return decompress(data, max_output_size or None)
        end = _frame_end(data)
        if end is None:
            raise _corrupt("truncated frame")
        if end < len(data) and not allow_extra_data:
            raise ZstdError("compressed input contains unused data")
        known = (int.from_bytes(data[:4], "little") != _MAGIC
                 or _parse_frame_header(data, 4)[2] is not None)
        if not known and not max_output_size:
            raise ZstdError("could not determine content size in frame header")
        return decompress(data[:end], None if known else max_output_size)

    def stream_reader(self, source, read_size=0, read_across_frames=False,
                      closefd=True):
        """Readable file-like object over the decoded ``source``."""
        return _StreamReader(source, closefd, read_across_frames)

    def decompressobj(self, write_size=0, read_across_frames=False):
        """Object whose ``decompress(data)`` decodes one frame fed in parts."""
        return _DecompressObj()


class _StreamReader(io.RawIOBase):
    """Decodes the source on first read (its first frame only, as zstandard does, unless
    ``read_across_frames``), then serves from memory."""

    def __init__(self, source, closefd=True, read_across_frames=False):
        super().__init__()
        self._source, self._closefd, self._across = source, closefd, read_across_frames
        self._data, self._pos = None, 0

    def readable(self) -> bool:
        return True

    def _decoded(self) -> bytes:
        if self.closed:
            raise ValueError("stream is closed")
        if self._data is None:
            src = self._source
            if not isinstance(src, (bytes, bytearray, memoryview)):
                src = src.read()
            if len(src) and not self._across:
                src = bytes(src)[:_frame_end(src) or len(src)]
            self._data = decompress(src) if len(src) else b""
        return self._data

    def read(self, size=-1) -> bytes:
        data = self._decoded()
        end = len(data) if size is None or size < 0 else self._pos + size
        chunk = data[self._pos:end]
        self._pos += len(chunk)
        return chunk

    read1 = read

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, b) -> int:
        chunk = self.read(len(b))
        b[:len(chunk)] = chunk
        return len(chunk)

    def tell(self) -> int:
        return self._pos

    def __del__(self):
        self._closefd = False      # as in zstandard, GC leaves source open
        super().__del__()

    def close(self) -> None:
        if not self.closed and self._closefd and hasattr(self._source,
                                                         "close"):
            self._source.close()
        super().close()


class _DecompressObj:
    """Like zstandard's decompressobj: one frame, extra bytes go to
    ``unused_data``.  Output comes once the whole frame has arrived."""

    def __init__(self):
        self._buf = bytearray()
        self.eof = False
        self.unused_data = b""
        self.unconsumed_tail = b""

    def decompress(self, data) -> bytes:
        if self.eof:
            raise ZstdError("cannot use a decompressobj multiple times")
        self._buf += data
        end = _frame_end(self._buf)
        if end is None:
            return b""
        frame = bytes(self._buf[:end])
        self.unused_data, self._buf, self.eof = bytes(self._buf[end:]), None, True
        return decompress(frame)

    def flush(self, length=0) -> bytes:
        return b""
