#!/usr/bin/env python3
"""What software pipelining could gain on the pipe family's row-sum fixture (docs/pipeline.md
"Form 1 on the GPU"): the fixture's kernel (test/fixtures/pipe/make_rowsum.py) written two more
ways at the source, compiled by Triton 3.6 for sm_90 (no GPU needed):
  regprefetch  the next block loaded into a register before the current one is added (software
               pipelining by hand, what family 3's fresh-register form would do in SASS);
  stages3      Triton's own pipeliner, num_stages=3 on the loop (async copies through shared memory).
Both accumulate every lane in the same order as the fixture, so their outputs are bit-identical.
    python3 bench/pipe/ceiling.py OUTDIR    writes OUTDIR/<name>.cubin and OUTDIR/<name>.json
                                            ({"shared": bytes of dynamic shared memory})
test/gpu/calls/session8-ceiling.sh compares them with the fixture on the GPU."""
import json
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ceiling_stages  # noqa: E402  (the num_stages variant, under the same kernel name)


@triton.jit
def rowsum(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    x = tl.load(x_ptr + row * N + offs)
    for k in tl.range(BLOCK, N, BLOCK, loop_unroll_factor=1):
        xn = tl.load(x_ptr + row * N + k + offs)
        acc += x
        x = xn
    acc += x
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def build(fn, name, out, stages):
    src = triton.compiler.ASTSource(fn=fn, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "i32"},
                                    constexprs={"BLOCK": 32})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 1, "num_stages": stages})
    with open(os.path.join(out, name + ".cubin"), "wb") as f:
        f.write(k.asm["cubin"])
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"shared": k.metadata.shared, "kernel": k.metadata.name}, f)
    print(name, "shared", k.metadata.shared, "kernel", k.metadata.name)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    build(rowsum, "regprefetch", out, 1)
    build(ceiling_stages.rowsum, "stages3", out, 3)


if __name__ == "__main__":
    main()
