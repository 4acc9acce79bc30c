; Two kernels in one module: @scale (ptx_kernel calling convention) and
; @offset (marked by !nvvm.annotations); @clamp is a device function.
target triple = "nvptx64-nvidia-cuda"

define internal float @clamp(float %x) alwaysinline {
  %lo = call float @llvm.maxnum.f32(float %x, float -1.0)
  %hi = call float @llvm.minnum.f32(float %lo, float 1.0)
  ret float %hi
}

define ptx_kernel void @scale(ptr addrspace(1) %p, float %s) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %tid to i64
  %q = getelementptr inbounds float, ptr addrspace(1) %p, i64 %i
  %x = load float, ptr addrspace(1) %q, align 4
  %y = fmul float %x, %s
  %z = call float @clamp(float %y)
  store float %z, ptr addrspace(1) %q, align 4
  ret void
}

define void @offset(ptr addrspace(1) %p, float %d) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %tid to i64
  %q = getelementptr inbounds float, ptr addrspace(1) %p, i64 %i
  %x = load float, ptr addrspace(1) %q, align 4
  %y = fadd float %x, %d
  store float %y, ptr addrspace(1) %q, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.minnum.f32(float, float)

!nvvm.annotations = !{!0}
!0 = !{ptr @offset, !"kernel", i32 1}
