; A block-wide sum: each warp reduces with shfl.sync.down, lane 0 of each warp
; writes its partial sum to shared memory, then warp 0 reduces the partials and
; one thread adds the block's sum to *out with an atomic.  The kernel is marked
; the older way, with !nvvm.annotations; @warp_sum is a device function.
target triple = "nvptx64-nvidia-cuda"

@partials = internal addrspace(3) global [32 x float] undef, align 4

define internal float @warp_sum(float %v0) {
entry:
  %s16 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s16
  %s8 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s8
  %s4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s4
  %s2 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s2
  %s1 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s1
  ret float %v5
}

define void @block_sum(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %ctaid, %ntid
  %i = add i32 %base, %tid
  %inb = icmp slt i32 %i, %n
  br i1 %inb, label %load, label %reduce

load:
  %ie = sext i32 %i to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %in, i64 %ie
  %x = load float, ptr addrspace(1) %p, align 4
  br label %reduce

reduce:
  %v = phi float [ %x, %load ], [ 0.0, %entry ]
  %ws = call float @warp_sum(float %v)
  %lane = and i32 %tid, 31
  %warp = lshr i32 %tid, 5
  %lane0 = icmp eq i32 %lane, 0
  br i1 %lane0, label %store_partial, label %sync

store_partial:
  %wp = getelementptr inbounds [32 x float], ptr addrspace(3) @partials, i32 0, i32 %warp
  store float %ws, ptr addrspace(3) %wp, align 4
  br label %sync

sync:
  call void @llvm.nvvm.barrier0()
  %w0 = icmp eq i32 %warp, 0
  br i1 %w0, label %final, label %exit

final:
  %nwarps = lshr i32 %ntid, 5
  %has = icmp ult i32 %lane, %nwarps
  br i1 %has, label %load_partial, label %final_sum

load_partial:
  %lp = getelementptr inbounds [32 x float], ptr addrspace(3) @partials, i32 0, i32 %lane
  %pv = load float, ptr addrspace(3) %lp, align 4
  br label %final_sum

final_sum:
  %fv = phi float [ %pv, %load_partial ], [ 0.0, %final ]
  %total = call float @warp_sum(float %fv)
  %t0 = icmp eq i32 %tid, 0
  br i1 %t0, label %add, label %exit

add:
  %old = atomicrmw fadd ptr addrspace(1) %out, float %total monotonic, align 4
  br label %exit

exit:
  ret void
}

declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

!nvvm.annotations = !{!0, !1}
!0 = !{ptr @block_sum, !"kernel", i32 1}
!1 = !{ptr @block_sum, !"maxntidx", i32 1024}
