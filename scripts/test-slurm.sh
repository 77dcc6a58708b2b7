#!/usr/bin/env bash
# Runs the Slurm job-array recipe of docs/tuning.md on a real, one-node Slurm
# cluster started on this machine (slurmctld + slurmd on loopback, munge for
# authentication): the recipe is taken from the docs as written, pointed at a
# small grid and 4 shards, submitted with sbatch, its shards merged by the
# dependent job; then the merged database is compared with an unsharded run
# of the same grid. Root only (it installs Debian's slurm-wlm and munge and
# starts their daemons, stopped again at the end). Needs a build (build/bin).
#   bash scripts/test-slurm.sh [GRID]        default GRID: m=64,96,128,160 n=64 k=64,128 (8 shapes)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
grid=${1:-"m=64,96,128,160 n=64 k=64,128"}
tool=$root/build/bin/sfc-tune
[ -x "$tool" ] || { echo "test-slurm: build first (bash scripts/test.sh)" >&2; exit 2; }
command -v slurmctld >/dev/null && command -v munged >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null

work=$(mktemp -d /tmp/sfc-slurm.XXXXXX)
chmod 755 "$work"
node=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p "$work"/{state,spool,log,run}
cat >"$work/slurm.conf" <<CONF
ClusterName=sfc-test
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
CONF
export SLURM_CONF=$work/slurm.conf

cleanup() {
  [ -f "$work/run/slurmd.pid" ] && kill "$(cat "$work/run/slurmd.pid")" 2>/dev/null || true
  [ -f "$work/run/slurmctld.pid" ] && kill "$(cat "$work/run/slurmctld.pid")" 2>/dev/null || true
  [ -n "${munge_pid:-}" ] && kill "$munge_pid" 2>/dev/null || true
}
trap cleanup EXIT

# munge: its own socket, pid and log under $work, so a munged the machine
# may already run is left alone.
mkdir -p "$work/munge"
chown munge:munge "$work/munge"
runuser -u munge -- /usr/sbin/munged --socket="$work/munge/munge.socket" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" --key-file=/etc/munge/munge.key
munge_pid=$(cat "$work/munge/munged.pid")

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  sinfo -h -o '%T' 2>/dev/null | grep -qE '^idle' && break
  sleep 1
done
sinfo -h -o '%T' | grep -qE '^idle' || { echo "test-slurm: the node never came up" >&2; tail "$work"/log/*.log >&2; exit 1; }
echo "test-slurm: one-node cluster up ($node, $cpus CPUs): $(sinfo -h -o '%P %D %T')"

# The recipe, exactly as docs/tuning.md has it, pointed at this checkout's
# binary, a small grid and 4 shards.
cd "$work"
"$tool" tune --grid "$grid" --k-layers 1,2 --k-block-factors 1:2 --reps 2 --warmup 0 --quiet --db whole.db
awk '/^#!\/bin\/bash$/ {on = 1} on {print} on && /^exit \$status$/ {exit}' "$root/docs/tuning.md" >tune.sbatch
sed -i -e "s|--array=0-15|--array=0-3|" \
  -e "s|sfc-tune |$tool |g" \
  -e "s|--shapes data/grids/paper.shapes|--grid \"$grid\" --k-layers 1,2 --k-block-factors 1:2 --reps 2 --warmup 0 --quiet|" \
  tune.sbatch
grep -q -- '--array=0-3' tune.sbatch && grep -q -- "--grid" tune.sbatch ||
  { echo "test-slurm: the recipe in docs/tuning.md changed shape; update this script" >&2; exit 1; }
export TMPDIR=$work/tmp  # the recipe's node-local folder, inherited by the tasks
mkdir -p "$TMPDIR"
jobid=$(sbatch --parsable --output="$work/log/task-%a.out" tune.sbatch)
merge=$(sbatch --parsable --dependency=afterany:"$jobid" --output="$work/log/merge.out" \
  --wrap "$tool merge results/shard-*.db -o results/all.db --json")
echo "test-slurm: submitted array job $jobid (4 tasks) and merge job $merge"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$jobid,$merge" 2>/dev/null)" ] && break
  sleep 1
done
for t in 0 1 2 3; do
  echo "test-slurm: task $t: $(grep -o '"shard":"[0-9/]*".*"tuned":[0-9]*' "log/task-$t.out" || echo 'no summary')"
done
echo "test-slurm: merge job: $(tail -1 log/merge.out)"

# The merged shards against the unsharded run: the same shapes, each with
# every configuration once.
summary() {
  "$tool" export --db "$1" --format csv --all -o - 2>/dev/null |
    awk -F, 'NR > 1 {rows[$15 "x" $16 "x" $17]++} END {for (s in rows) print s, rows[s]}' | sort
}
leftovers=$(find "$TMPDIR" -type f | wc -l)
if [ "$(summary results/all.db)" == "$(summary whole.db)" ] && [ -n "$(summary whole.db)" ] && [ "$leftovers" = 0 ]; then
  echo "test-slurm: PASS: 4 shards merged hold the unsharded run's $(summary whole.db | wc -l) shapes," \
       "each configuration once ($work)"
else
  echo "test-slurm: FAIL: merged shards differ from the unsharded run, or the tasks left $leftovers files" >&2
  diff <(summary results/all.db) <(summary whole.db) >&2 || true
  exit 1
fi
