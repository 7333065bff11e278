#!/usr/bin/env bash
# data/slurm-array.sh on a real Slurm cluster (issue 40): a one-node cluster
# on this machine (slurmctld and slurmd on localhost, munge for their
# authentication, every file under a temporary folder through SLURM_CONF),
# and a user's night on it:
#   1. sbatch the array script on a small spec, as 4 tasks;
#   2. requeue one running task (scontrol requeue: SIGTERM, then it runs
#      again with --resume and keeps the rows it wrote);
#   3. cancel another running task (scancel) and submit it again;
#   4. merge the pieces, which must equal the one-machine CSV, timing
#      columns (backend, seconds, customers_per_s) aside.
# Needs root and Debian's slurm-wlm and munge (.ci/run installs them).
# Usage: scripts/slurm-check.sh [QSWEEP_BINARY] (default target/debug/qsweep).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
qsweep=$(realpath "${1:-target/debug/qsweep}")
[ -x "$qsweep" ] || { echo "slurm-check: no qsweep binary at $qsweep" >&2; exit 1; }
started=$SECONDS

work=$(mktemp -d /tmp/qsweep-slurm.XXXXXX)
export SLURM_CONF=$work/slurm.conf
mkdir -p "$work"/{state,spool,run}
cat >"$SLURM_CONF" <<EOF
ClusterName=qsweep-check
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
# No cgroups in a container: processes tracked by their parent ids.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=30
NodeName=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

stop_cluster() {
    local rc=$?
    for d in slurmd slurmctld; do
        [ -f "$work/$d.pid" ] && kill "$(cat "$work/$d.pid")" 2>/dev/null || true
    done
    if [ "$rc" -ne 0 ]; then
        echo "slurm-check: failed; the cluster's logs:" >&2
        tail -n 20 "$work"/slurmctld.log "$work"/slurmd.log "$work"/run/*.log >&2 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap stop_cluster EXIT

if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge
    chown munge:munge /run/munge
    runuser -u munge -- /usr/sbin/munged
fi
slurmctld
slurmd
for _ in $(seq 1 60); do
    [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
    sleep 0.5
done
[ "$(sinfo -h -o %T)" = idle ] || { echo "slurm-check: the node never became idle" >&2; exit 1; }

# 40 points, 10 per task: each task runs for seconds, long enough to be
# requeued or cancelled in the middle.
cat >"$work/run/spec.toml" <<'EOF'
[sweep]
routing = ["random", "central"]
servers = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
lambda = [0.8]
service = ["exp(mean=0.1)"]
[run]
reps = 2048
customers = 20000
warmup = 0
seed = 7
backend = "cpu"
EOF
cd "$work/run"
PATH=$(dirname "$qsweep"):$PATH
export PATH

# The array script as shipped; the flags it sets for a GPU cluster are
# replaced for this one-node, GPU-less cluster.
submit() { # submit ARRAY -> the job id
    sbatch --parsable --array="$1" --cpus-per-task=1 --gres=none --open-mode=append \
        --output="$work/run/task-%a.log" "$repo/data/slurm-array.sh" spec.toml 4
}
rows() { # rows K: whole data rows in piece-K.csv so far
    local n
    n=$(wc -l <"piece-$1.csv" 2>/dev/null || echo 0)
    echo $((n > 0 ? n - 1 : 0))
}
state() { # state JOB_TASK: its Slurm state, empty once it has left the queue
    squeue -h -j "$1" -o %T 2>/dev/null || true
}
wait_running_with_a_row() { # wait_running_with_a_row JOB K
    for _ in $(seq 1 600); do
        if [ "$(state "$1_$2")" = RUNNING ] && [ "$(rows "$2")" -ge 1 ]; then
            return 0
        fi
        sleep 0.1
    done
    echo "slurm-check: task $2 never ran with a row written (state: $(state "$1_$2"))" >&2
    exit 1
}

job=$(submit 0-3)
echo "slurm-check: submitted job array $job (tasks 0-3)"

# 2. Requeue task 1 in the middle: Slurm sends SIGTERM, qsweep keeps its
# rows and exits 130, and the task runs again (at once, not after the
# requeue delay), resuming.
wait_running_with_a_row "$job" 1
before=$(rows 1)
scontrol requeue "${job}_1"
for _ in $(seq 1 300); do
    [ "$(state "${job}_1")" = PENDING ] && break
    sleep 0.1
done
scontrol update jobid="${job}_1" StartTime=now
echo "slurm-check: requeued task 1 after $before of its 10 rows"

# 3. Cancel task 2 in the middle and submit it again.
wait_running_with_a_row "$job" 2
scancel "${job}_2"
for _ in $(seq 1 300); do
    [ -z "$(state "${job}_2")" ] && break
    sleep 0.1
done
cancelled=$(rows 2)
[ "$cancelled" -lt 10 ] || { echo "slurm-check: task 2 finished before scancel" >&2; exit 1; }
again=$(submit 2)
echo "slurm-check: cancelled task 2 after $cancelled of its 10 rows; submitted it again as $again"

for _ in $(seq 1 1200); do
    [ -z "$(squeue -h 2>/dev/null)" ] && break
    sleep 0.1
done
[ -z "$(squeue -h)" ] || { echo "slurm-check: tasks still queued after 2 minutes" >&2; exit 1; }
grep -q "To resume" task-1.log || { echo "slurm-check: task 1 shows no stop by SIGTERM" >&2; exit 1; }
grep -q "resuming:" task-1.log || { echo "slurm-check: task 1 did not resume" >&2; exit 1; }
grep -q "resuming:" task-2.log || { echo "slurm-check: task 2 did not resume" >&2; exit 1; }

# 4. The merged pieces are the one-machine CSV, timing columns aside.
qsweep merge merged.csv piece-0.csv piece-1.csv piece-2.csv piece-3.csv
qsweep run spec.toml -o one.csv -q >/dev/null
columns=$(head -n 1 one.csv | tr ',' '\n' | grep -vx -e backend -e seconds -e customers_per_s | paste -sd,)
qsweep export one.csv one-cmp.csv --columns "$columns"
qsweep export merged.csv merged-cmp.csv --columns "$columns"
cmp one-cmp.csv merged-cmp.csv
echo "slurm-check: 4 tasks, one requeued and one cancelled and resubmitted, merge into the one-machine CSV ($(($(wc -l <merged.csv) - 1)) rows) in $((SECONDS - started)) s"
