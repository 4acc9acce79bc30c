; A host module: not for the NVPTX target.
target triple = "x86_64-pc-linux-gnu"

define ptx_kernel void @k() {
entry:
  ret void
}
