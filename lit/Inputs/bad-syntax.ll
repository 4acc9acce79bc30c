; Not LLVM IR: the instruction below does not exist.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %p) {
entry:
  frobnicate float 1.0, ptr addrspace(1) %p
  ret void
}
