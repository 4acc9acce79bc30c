; Parses, but the verifier rejects it: %a uses %b before %b is defined.
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %p) {
entry:
  %a = add i32 %b, 1
  %b = add i32 %a, 1
  store i32 %b, ptr addrspace(1) %p
  ret void
}
