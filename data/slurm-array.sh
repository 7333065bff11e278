#!/bin/bash
# A qsweep sweep spread over a Slurm job array: task K of N runs the grid
# points whose index is K modulo N and writes piece-K.csv (+ piece-K.meta.json).
# Seeds do not depend on the sharding, so the merged CSV equals what one
# machine would have written (timing columns aside).
#
#   sbatch data/slurm-array.sh spec.toml        # submit the 16 tasks
#   qsweep merge results.csv piece-*.csv        # when all have finished
#
# The second argument is the number of pieces (16, as --array=0-15): give it
# when the array is another size (sbatch --array=0-63 data/slurm-array.sh
# spec.toml 64), and keep it when resubmitting one task alone
# (sbatch --array=5 data/slurm-array.sh spec.toml 16), whose
# SLURM_ARRAY_TASK_COUNT is 1.
#
# --resume makes every task restartable: a requeued, preempted or resubmitted
# task keeps the rows it already wrote and runs only the missing points
# (a first run just starts the file). On SIGTERM (time limit, preemption)
# qsweep finishes the points in flight and exits 130; resubmit the same array
# (or `scontrol requeue`) to continue. `qsweep merge` names any piece that is
# still unfinished.
#
#SBATCH --job-name=qsweep
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --gres=gpu:1
#SBATCH --time=12:00:00
#SBATCH --requeue
#SBATCH --signal=B:TERM@120
#SBATCH --output=qsweep-%A_%a.log

set -euo pipefail
SPEC=${1:-spec.toml}
N=${2:-16}
K=${SLURM_ARRAY_TASK_ID:?run this with sbatch --array}

exec qsweep run "$SPEC" --shard "$K/$N" -o "piece-$K.csv" --resume
