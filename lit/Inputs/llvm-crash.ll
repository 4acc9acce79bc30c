; Valid IR on which LLVM 19's NVPTX back end itself crashes (an fp128 kernel
; parameter; llc-19 dies the same way).  sasstune-cc compiles in a child
; process, so it reports the crash instead of sharing it.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %p, fp128 %x) {
  %r = fptosi fp128 %x to i32
  store i32 %r, ptr addrspace(1) %p
  ret void
}
