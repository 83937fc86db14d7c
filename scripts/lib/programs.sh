# shellcheck shell=bash
# The programs the accuracy scripts trace (scripts/accuracy, cluster-accuracy, cluster-placement),
# written once. Sourced, not run.

# The examples' arguments (examples/mpi/*.c: iterations first). pipeline's blocks of 128 KiB are
# above the eager limit of vader (4 KiB) and of the TCP BTL (64 KiB): each send waits for its
# receiver, the rendezvous synchronisation of LogGPS.
# shellcheck disable=SC2034  # used by the scripts that source this file
declare -A example_args=(
  [ring]="1000 1024 20"
  [stencil2d]="1000 128"
  [cg]="1000 2000"
  [pipeline]="100 131072 1000 4000"
)

# real_program_setup NAME NP WORKDIR: a fresh WORKDIR holding NAME's input, and NAME's command
# line in the array real_program_cmd (run it with WORKDIR as its working directory). NAME: hpcc
# (Debian's HPC Challenge, tests/tracer/hpcc/hpccinf.txt with an HPL process grid of NP ranks:
# 1 x 2, 2 x 2, 2 x 4) or lammps (Debian's LAMMPS, the Lennard-Jones melt tests/tracer/lammps/in.melt).
real_program_setup() {
  local name=$1 np=$2 work=$3 root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  rm -rf "$work"
  mkdir -p "$work"
  case $name in
    hpcc)
      cp "$root/tests/tracer/hpcc/hpccinf.txt" "$work/"
      if [ "$np" -ge 4 ]; then
        sed -i -e 's/^1            Ps/2            Ps/' \
          -e "s/^2            Qs/$((np / 2))            Qs/" "$work/hpccinf.txt"
      fi
      real_program_cmd=(hpcc)
      ;;
    lammps)
      real_program_cmd=(lmp -in "$root/tests/tracer/lammps/in.melt" -log none -echo none -screen none)
      ;;
    *)
      echo "real_program_setup: unknown program $name (hpcc or lammps)" >&2
      return 2
      ;;
  esac
}

# largest_traced_message COMMGAUGE TRACE...: the largest message the traces hold in bytes, and
# at least profile's default 256 KiB. A profile prices sizes up to the largest it measured (HPCC
# sends 2 MB), so the accuracy scripts trace first and profile up to this.
largest_traced_message() {
  local cg=$1 largest=262144 summary t
  shift
  summary=$(mktemp)
  for t in "$@"; do
    "$cg" trace-summary "$t" --json "$summary" >/dev/null
    largest=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(max([int(sys.argv[2])] + [m["bytes"] for m in j["largest_messages"]]))' "$summary" "$largest")
  done
  rm -f "$summary"
  echo "$largest"
}
