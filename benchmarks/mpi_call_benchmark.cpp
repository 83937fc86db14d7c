// Per-call cost of MPI calls, run twice: plainly and with the tracer preloaded
// (scripts/bench-tracer). The difference is what recording costs per call.
//   mpirun -np 1 build/release/benchmarks/mpi_call_bench

#include <mpi.h>

#include <benchmark/benchmark.h>

namespace {

void BM_MPI_Iprobe_nothing(benchmark::State& state) {  // a failed poll: folded into a run
  int flag = 0;
  for (auto _ : state)
    MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MPI_Iprobe_nothing);

void BM_MPI_Testany_pending(benchmark::State& state) {  // hpcc RandomAccess's poll loop
  double in = 0;
  MPI_Request r;
  MPI_Irecv(&in, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &r);
  int index = 0, flag = 0;
  for (auto _ : state)
    MPI_Testany(1, &r, &index, &flag, MPI_STATUS_IGNORE);
  state.SetItemsProcessed(state.iterations());
  MPI_Cancel(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}
BENCHMARK(BM_MPI_Testany_pending);

void BM_MPI_Comm_rank(benchmark::State& state) {  // a local call: counted, never an event
  int rank = 0;
  for (auto _ : state)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MPI_Comm_rank);

void BM_MPI_Isend_Irecv_Waitall_self(benchmark::State& state) {  // 3 recorded events
  double out = 1, in = 0;
  MPI_Request r[2];
  for (auto _ : state) {
    MPI_Irecv(&in, 1, MPI_DOUBLE, 0, 5, MPI_COMM_SELF, &r[0]);
    MPI_Isend(&out, 1, MPI_DOUBLE, 0, 5, MPI_COMM_SELF, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  state.SetItemsProcessed(state.iterations() * 3);
}
BENCHMARK(BM_MPI_Isend_Irecv_Waitall_self);

void BM_MPI_Allreduce_self(benchmark::State& state) {  // a collective on one rank
  double x = 1, y = 0;
  for (auto _ : state)
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MPI_Allreduce_self);

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
