; A grid-stride loop over tiles: each iteration loads a 256-element tile into
; shared memory, waits at a barrier, writes out[i] = (t[j-1] + t[j] + t[j+1]) / 3
; from the tile (clamped at the tile's edges), and waits again before the tile
; is overwritten.  Launch with 256 threads per block.
target triple = "nvptx64-nvidia-cuda"

@tile = internal addrspace(3) global [256 x float] undef, align 4

define ptx_kernel void @smooth(ptr addrspace(1) noalias %in, ptr addrspace(1) noalias %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %start = mul i32 %ctaid, 256
  %stride = mul i32 %nctaid, 256
  %left = call i32 @llvm.umax.i32(i32 %tid, i32 1)
  %jl = sub i32 %left, 1
  %right = call i32 @llvm.umin.i32(i32 %tid, i32 254)
  %jr = add i32 %right, 1
  %pt = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i32 0, i32 %tid
  %pl = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i32 0, i32 %jl
  %pr = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i32 0, i32 %jr
  %any = icmp slt i32 %start, %n
  br i1 %any, label %loop, label %exit

loop:
  %tbase = phi i32 [ %start, %entry ], [ %tnext, %latch ]
  %i = add i32 %tbase, %tid
  %inb = icmp slt i32 %i, %n
  %ie = sext i32 %i to i64
  br i1 %inb, label %load, label %fill

load:
  %pin = getelementptr inbounds float, ptr addrspace(1) %in, i64 %ie
  %x = load float, ptr addrspace(1) %pin, align 4
  br label %fill

fill:
  %xv = phi float [ %x, %load ], [ 0.0, %loop ]
  store float %xv, ptr addrspace(3) %pt, align 4
  call void @llvm.nvvm.barrier0()
  br i1 %inb, label %compute, label %latch

compute:
  %a = load float, ptr addrspace(3) %pl, align 4
  %b = load float, ptr addrspace(3) %pt, align 4
  %c = load float, ptr addrspace(3) %pr, align 4
  %ab = fadd float %a, %b
  %abc = fadd float %ab, %c
  %avg = fmul float %abc, 0x3FD5555560000000
  %pout = getelementptr inbounds float, ptr addrspace(1) %out, i64 %ie
  store float %avg, ptr addrspace(1) %pout, align 4
  br label %latch

latch:
  call void @llvm.nvvm.barrier0()
  %tnext = add i32 %tbase, %stride
  %more = icmp slt i32 %tnext, %n
  br i1 %more, label %loop, label %exit

exit:
  ret void
}

declare void @llvm.nvvm.barrier0()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.umax.i32(i32, i32)
declare i32 @llvm.umin.i32(i32, i32)
