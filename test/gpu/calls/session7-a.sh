#!/usr/bin/env bash
# Session 7, GPU call A: the per-family ablation issue 15 asks for ("for each kernel, the confirmed
# gain with the old move set, then with each family added, then all"), on the 13 bench kernels,
# greedy (the default method) at 4 s, seeds 1 and 2, every result re-measured by `sasstune compare`.
# Spread over every GPU of the machine: one job = one kernel and one seed (bench/ablation.py with
# --kernels K, CUDA_VISIBLE_DEVICES=g), a GPU takes the next job when its last one ends; each job's
# A/B pairs run on one GPU, so the ratios stay paired.  The shards are joined with
# `bench/ablation.py merge`.  Device tool: kind nvidia-h200-x8 (or fewer GPUs: fewer jobs finish),
# carry [".deps"].  KERNELS="a b" and SEEDS="1" narrow it (one GPU: ~100 s a job); BUDGET (4s),
# CONFIGS ("NAME=FAMILIES ...") and JOB_S (the least time a job is started with) change it.  $OUT: s1.md, s2.md (one table per seed), jobs.txt, session7-a.tgz.
cd "$(dirname "$0")/../../.."
source test/gpu/calls/parts.sh
export SASSTUNE_WORKER=$PWD/build-gpu/sasstune-worker
ST=$PWD/build-gpu/sasstune
W=/tmp/s7a; rm -rf $W; mkdir -p $W; echo 0 > $W/next   # a warm machine keeps /tmp
NG=$(nvidia-smi -L | grep -c '^GPU')
KERNELS=${KERNELS:-$(python3 -c "import sys; sys.path.insert(0,'bench'); import kernels; print(' '.join(c.name for c in kernels.CASES))")}
JOBS=(); for s in ${SEEDS:-1 2}; do for k in $KERNELS; do JOBS+=("$s $k"); done; done
END=$(( T0 + ${TOTAL_S:-560} ))   # no job starts after END - JOB_S (a 4 s job takes ~100 s)
echo "GPUs: $NG, jobs: ${#JOBS[@]}"
job() {  # job GPU INDEX SEED KERNEL
	local g=$1 j=$2 s=$3 k=$4 c=()
	for f in ${CONFIGS:-swap,ctrl=swap,ctrl +hoist=swap,ctrl,hoist +wait=swap,ctrl,wait +sb=swap,ctrl,sb \
		+xblock=swap,ctrl,xblock +rename=swap,ctrl,rename default=swap,ctrl,hoist,wait,sb,xblock \
		default+rename=swap,ctrl,hoist,wait,sb,xblock,rename}; do
		c+=(--config "${f%%=*}=--method greedy --seed $s --families ${f#*=}")
	done
	CUDA_VISIBLE_DEVICES=$g TRITON_CACHE_DIR=$W/triton$g PYTHONUNBUFFERED=1 timeout $(( END - $(date +%s) )) python3 bench/ablation.py \
		--out $W/s$s/$k --budget ${BUDGET:-4s} --kernels $k --rotate-offset $j --sasstune "$ST" "${c[@]}" \
		> $W/s$s-$k.log 2>&1
	local rc=$?
	echo "$(date +%T) gpu $g seed $s $k rc=$rc $(( $(date +%s) - T0 ))s" >> $W/jobs.txt
}
gpu_loop() {
	local g=$1 n
	while :; do
		n=$(flock $W/lock bash -c "n=\$(cat $W/next); echo \$((n+1)) > $W/next; echo \$n")
		[ "$n" -lt ${#JOBS[@]} ] || break
		[ $(( $(date +%s) + ${JOB_S:-150} )) -lt $END ] || { echo "gpu $g: time box, job $n not started" >> $W/jobs.txt; break; }
		job $g $n ${JOBS[$n]}
	done
}
for g in $(seq 0 $(( NG - 1 ))); do gpu_loop $g & done
wait
cat $W/jobs.txt
for s in ${SEEDS:-1 2}; do
	ls -d $W/s$s/*/ >/dev/null 2>&1 || continue
	python3 bench/ablation.py merge --out $W/m$s $(ls -d $W/s$s/*/) && cp $W/m$s/ablation.md $OUT/s$s.md && cat $OUT/s$s.md
done
cp $W/jobs.txt $OUT/
tar czf $OUT/session7-a.tgz --exclude='*.cubin' --exclude='*.ptx' --exclude='triton*' -C /tmp s7a
echo "done at $(( $(date +%s) - T0 ))s"
