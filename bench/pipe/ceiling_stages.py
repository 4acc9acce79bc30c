"""The num_stages=3 variant of bench/pipe/ceiling.py, in its own module so that its kernel has the
fixture's name (rowsum): `sasstune compare` runs both cubins under one launch spec."""
import triton
import triton.language as tl


@triton.jit
def rowsum(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.range(0, N, BLOCK, loop_unroll_factor=1, num_stages=3):
        acc += tl.load(x_ptr + row * N + k + offs)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
