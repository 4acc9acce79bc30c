# Sourced by the GPU call scripts that run several call scripts in one device call (session4-a.sh,
# session4-b.sh): from the repository root, sets T0, builds build-gpu once and defines
#   part NAME SECONDS SCRIPT ARGS...   run one call script with its own OUT (/tmp/s4/NAME) under a
#                                      time box; print its exit status and the last PART_TAIL lines
OUT=${OUT:?run from the device tool, which sets OUT}
T0=$(date +%s)
source scripts/device-setup.sh >/dev/null 2>&1
bash scripts/build-gpu.sh build-gpu "$OUT/build.log" || exit 1
echo "built at $(( $(date +%s) - T0 ))s"
part() {
	local name=$1 secs=$2; shift 2
	mkdir -p /tmp/s4/$name
	OUT=/tmp/s4/$name timeout "$secs" bash "$@" > /tmp/s4/$name/console.txt 2>&1
	echo "== $name rc=$? at $(( $(date +%s) - T0 ))s"; tail -"${PART_TAIL:-25}" /tmp/s4/$name/console.txt
}
