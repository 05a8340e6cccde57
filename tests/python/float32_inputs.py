"""Every float32 bit pattern, in the order `fmtcheck sweep` converts them,
cut into the chunks the tests compare one at a time (2^24 inputs: 64 MiB of
float32, small enough for 2 cores and 24 GiB beside other work)."""
import numpy as np

CHUNK = 1 << 24
COUNT = 1 << 32
_OFFSETS = np.arange(CHUNK, dtype=np.uint32)


def chunk_bits(first):
    """The float32 bit patterns first .. first + CHUNK - 1."""
    return _OFFSETS + np.uint32(first)


def chunk_inputs(first):
    """The float32 inputs first .. first + CHUNK - 1, by bit pattern."""
    return chunk_bits(first).view(np.float32)
