#!/usr/bin/env bash
# cmake --install into a temporary prefix, the prefix moved elsewhere, then an MPI example traced
# and simulated with the moved binary, which must find the moved tracer (not the build tree's).
# With MPICH_PROGRAM (tests/tracer's modeled_c built with MPICH), the same for the MPICH tracer.
# Usage: install_test.sh BUILD_DIR EXAMPLE_RING [MPICH_PROGRAM]
set -euo pipefail
build="$1"
ring="$2"
mpich_program="${3:-}"
work="$(mktemp -d /tmp/cg-install-XXXXXX)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/first" >"$work/install.log"
mv "$work/first" "$work/moved"
bin="$work/moved/bin/commgauge"
fail() {
  echo "install_test: $*" >&2
  exit 1
}
[ -x "$bin" ] || fail "no $bin"
for f in share/commgauge/schemas/profile.v1.schema.json share/commgauge/schemas/link-params.v1.schema.json \
  share/commgauge/examples/networks/loggp-simple.json share/doc/commgauge/README.md share/doc/commgauge/docs/reference.md \
  share/man/man1/commgauge.1 share/man/man1/commgauge-loggp.1 share/man/man1/commgauge-simulate.1 \
  share/bash-completion/completions/commgauge; do
  [ -f "$work/moved/$f" ] || fail "not installed: $f"
done
# The man pages render and say what the --help says.
page="$work/moved/share/man/man1/commgauge-loggp.1"
grep -q 'PRTT(n,d,s)' "$page" && grep -q '§3.2' "$page" || fail "commgauge-loggp.1 lacks loggp's help"
MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q "^SYNOPSIS" || fail "commgauge-loggp.1 does not render"
# The installed completion completes a subcommand's option.
completed="$(bash -c 'source "$1"; COMP_WORDS=(commgauge loggp --max-s); COMP_CWORD=2; _commgauge;
  echo "${COMPREPLY[*]}"' _ "$work/moved/share/bash-completion/completions/commgauge")"
[ "$completed" = "--max-size" ] || fail "the installed completion gave '$completed' for loggp --max-s"
version="$("$bin" --version)"
echo "$version"
grep -q "^commgauge [0-9]" <<<"$version" || fail "--version: $version"
grep -q "^built with Open MPI v[0-9]" <<<"$version" || fail "--version names no MPI: $version"
unset COMMGAUGE_TRACER
"$bin" trace -o "$work/trace" -- mpirun --allow-run-as-root -np 2 "$ring" 2 100 5 \
  >"$work/trace.out" 2>"$work/trace.err" || { cat "$work/trace.err" >&2; fail "trace failed"; }
tracer="$(sed -n 's/.*with the tracer \(.*\)$/\1/p' "$work/trace.err")"
case "$tracer" in
  "$(realpath "$work/moved")"/lib*/commgauge/libcommgauge-tracer.so) ;;
  *) fail "the moved binary used the tracer '$tracer', not the moved prefix's" ;;
esac
"$bin" simulate "$work/trace" --model none >"$work/simulate.out" || fail "simulate failed"
# The ring (2 ranks, 2 iterations) posts 4 MPI_Isend; the replay must have them all.
grep -Eq "^MPI_Isend +4 " "$work/simulate.out" || { cat "$work/simulate.out"; fail "simulate did not replay the 4 MPI_Isend"; }
if [ -n "$mpich_program" ]; then
  grep -q "^traces MPICH [0-9]" <<<"$version" || fail "--version names no MPICH tracer: $version"
  unset COMMGAUGE_TRACER_MPICH
  mkdir "$work/counts"
  "$bin" trace -o "$work/trace-mpich" -- mpiexec.mpich -np 4 "$mpich_program" "$work/counts" \
    >"$work/trace-mpich.out" 2>"$work/trace-mpich.err" || {
    cat "$work/trace-mpich.err" >&2
    fail "trace under MPICH failed"
  }
  mpich_tracer="$(sed -n 's/.*with the tracer \(.*\)$/\1/p' "$work/trace-mpich.err")"
  case "$mpich_tracer" in
    "$(realpath "$work/moved")"/lib*/commgauge/libcommgauge-tracer-mpich.so) ;;
    *) fail "under MPICH the moved binary used the tracer '$mpich_tracer'" ;;
  esac
  "$bin" trace-check "$work/trace-mpich" | grep -q "OK (0 errors" || fail "the MPICH trace does not check"
  tracer="$tracer and $mpich_tracer"
fi
echo "install_test: installed, moved, traced and simulated with $bin and $tracer"
