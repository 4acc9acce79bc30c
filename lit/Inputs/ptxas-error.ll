; Valid LLVM IR whose PTX ptxas rejects: the inline assembly is not a PTX
; instruction, and LLVM copies inline assembly into the PTX unchecked.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %p) {
entry:
  call void asm sideeffect "frobnicate.b32 42;", ""()
  ret void
}
