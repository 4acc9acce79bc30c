; Only a device function: nothing to launch, so nothing for sasstune to tune.
target triple = "nvptx64-nvidia-cuda"

define void @helper(ptr addrspace(1) %p) {
entry:
  store float 1.0, ptr addrspace(1) %p
  ret void
}

; An annotation that is not "kernel" = 1 does not make a kernel either.
!nvvm.annotations = !{!0}
!0 = !{ptr @helper, !"kernel", i32 0}
