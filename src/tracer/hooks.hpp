#pragma once
// The recorders the generated wrappers call after the PMPI call: one per pattern of
// src/trace/mpi_functions.txt, taking the C arguments (the Fortran wrappers convert first),
// plus the handles as they were before the call where the call overwrites them.

#include <mpi.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "tracer/runtime.hpp"

/// The gfortran wrappers have no declaration in mpi.h to make them visible.
#define COMMGAUGE_FORTRAN_EXPORT extern "C" __attribute__((visibility("default")))
/// The C wrappers: Open MPI's mpi.h declares MPI_* visible, MPICH's does not (the tracer is
/// compiled with hidden visibility), so each definition says it.
#define COMMGAUGE_C_EXPORT extern "C" __attribute__((visibility("default")))

namespace commgauge::tracer {

// ---- scratch space and Fortran conversions (recorder.cpp) ----

/// Statuses for a call made with MPI_STATUSES_IGNORE (the tracer needs them).
MPI_Status* scratch_statuses(int n);
const MPI_Request* snapshot_requests(const MPI_Request* requests, int n);
/// A copy of a request array as it was before a completing call: in `small` (8 entries) when
/// it fits, else in scratch space.
inline const MPI_Request* snapshot_requests(const MPI_Request* requests, int n,
                                            MPI_Request* small) {
  if (n < 0 || n > 8 || requests == nullptr) return snapshot_requests(requests, n);
  for (int i = 0; i < n; ++i)
    small[i] = requests[i];
  return small;
}

/// The real pmpi_xxx_ of the Fortran binding, found at first use. Programs without the
/// Fortran library never call the mpi_xxx_ wrappers, so never get here.
template <typename F>
F fortran_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "commgauge tracer: %s not found in the MPI library\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}
/// MPI_IN_PLACE / MPI_BOTTOM for the Fortran sentinels, else the address itself.
void* fortran_buffer(void* f_buffer);
/// A Fortran status argument, or scratch if it is MPI_STATUS_IGNORE.
MPI_Fint* fortran_status(MPI_Fint* f_status);
MPI_Fint* fortran_statuses(MPI_Fint* f_statuses, int n);
MPI_Status* c_statuses(const MPI_Fint* f_statuses, int n);
/// Fortran request handles as C handles, in scratch buffer `slot` (0 before, 1 after the call).
MPI_Request* c_requests(const MPI_Fint* f_requests, int n, int slot);
/// 1-based Fortran indices as 0-based C ones (MPI_UNDEFINED stays).
int c_index(MPI_Fint f_index);
int* c_indices(const MPI_Fint* f_indices, int n);
/// Alltoallw's per-peer datatypes; `slot` 0 for send, 1 for receive types.
const MPI_Datatype* c_datatypes(const MPI_Fint* f_types, MPI_Comm comm, int slot);

/// A look at a receive buffer (`count` elements of `type` at `buf`) before the receive: the
/// bytes of it in pages this process has never touched (mincore: not resident), whose page faults
/// the receive then pays, and the ticks the look took. Nothing looked at (ticks 0) for buffers
/// smaller than Settings::fresh_min_bytes: a look costs a system call.
struct FreshLook {
  std::uint64_t bytes = 0;
  std::int64_t ticks = 0;
};
FreshLook look_at_receive_buffer(const void* buf, int count, MPI_Datatype type);
/// Where the first byte of a send buffer (`count` elements of `type` at `buf`) lies in its page,
/// or nothing (no data, MPI_IN_PLACE, a datatype whose extent MPI does not give).
std::optional<std::uint64_t> send_page_offset_bytes(const void* buf, int count, MPI_Datatype type);

namespace hooks {

// Point to point.
void send(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
void isend(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
           MPI_Request* request);
void send_init(Call& c, const void* buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request* request);
// A receive's last argument: the look at its buffer before the call (look_at_receive_buffer above).
void recv(Call& c, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
          MPI_Status* status, FreshLook fresh);
void irecv(Call& c, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
           MPI_Request* request, FreshLook fresh);
void recv_init(Call& c, void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request* request);
void sendrecv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
              int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source,
              int recvtag, MPI_Comm comm, MPI_Status* status, FreshLook fresh);
void sendrecv_replace(Call& c, void* buf, int count, MPI_Datatype type, int dest, int sendtag,
                      int source, int recvtag, MPI_Comm comm, MPI_Status* status, FreshLook fresh);
void probe(Call& c, int source, int tag, MPI_Comm comm, MPI_Status* status);
void iprobe(Call& c, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
void mprobe(Call& c, int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
void improbe(Call& c, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
             MPI_Status* status);
void mrecv(Call& c, void* buf, int count, MPI_Datatype type, MPI_Message* message,
           MPI_Status* status, MPI_Message message_before, FreshLook fresh);
void imrecv(Call& c, void* buf, int count, MPI_Datatype type, MPI_Message* message,
            MPI_Request* request, MPI_Message message_before, FreshLook fresh);

// Requests.
void start(Call& c, MPI_Request* request, MPI_Request before);
void startall(Call& c, int count, MPI_Request requests[], const MPI_Request* before);
void wait(Call& c, MPI_Request* request, MPI_Status* status, MPI_Request before);
void waitall(Call& c, int count, MPI_Request requests[], MPI_Status statuses[],
             const MPI_Request* before);
void waitany(Call& c, int count, MPI_Request requests[], int* index, MPI_Status* status,
             const MPI_Request* before);
void waitsome(Call& c, int incount, MPI_Request requests[], int* outcount, int indices[],
              MPI_Status statuses[], const MPI_Request* before);
void test(Call& c, MPI_Request* request, int* flag, MPI_Status* status, MPI_Request before);
void testall(Call& c, int count, MPI_Request requests[], int* flag, MPI_Status statuses[],
             const MPI_Request* before);
void testany(Call& c, int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status,
             const MPI_Request* before);
void testsome(Call& c, int incount, MPI_Request requests[], int* outcount, int indices[],
              MPI_Status statuses[], const MPI_Request* before);
void cancel(Call& c, MPI_Request* request);
void test_cancelled(Call& c, const MPI_Status* status, int* flag);
void request_free(Call& c, MPI_Request* request, MPI_Request before);

// Collectives (the nonblocking forms pass their request).
void barrier(Call& c, MPI_Comm comm, MPI_Request* request = nullptr);
void bcast(Call& c, void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
           MPI_Request* request = nullptr);
void reduce(Call& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
            int root, MPI_Comm comm, MPI_Request* request = nullptr);
void allreduce(Call& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, MPI_Request* request = nullptr);
void reduce_scatter(Call& c, const void* sendbuf, void* recvbuf, const int recvcounts[],
                    MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request = nullptr);
void reduce_scatter_block(Call& c, const void* sendbuf, void* recvbuf, int recvcount,
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                          MPI_Request* request = nullptr);
void gather(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
            MPI_Request* request = nullptr);
void scatter(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request* request = nullptr);
void gatherv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
             MPI_Comm comm, MPI_Request* request = nullptr);
void scatterv(Call& c, const void* sendbuf, const int sendcounts[], const int displs[],
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm, MPI_Request* request = nullptr);
void allgather(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request = nullptr);
void allgatherv(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                MPI_Request* request = nullptr);
void alltoall(Call& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request = nullptr);
void alltoallv(Call& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request = nullptr);
void alltoallw(Call& c, const void* sendbuf, const int sendcounts[], const int sdispls[],
               const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
               MPI_Request* request = nullptr);

// Communicators: one recorder per creation call (handle types may be the same C type).
void comm_split(Call& c, MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
void comm_split_type(Call& c, MPI_Comm comm, int split_type, int key, MPI_Info info,
                     MPI_Comm* newcomm);
void comm_dup(Call& c, MPI_Comm comm, MPI_Comm* newcomm);
void comm_dup_with_info(Call& c, MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm);
void comm_idup(Call& c, MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
void comm_create(Call& c, MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
void comm_create_group(Call& c, MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm);
void cart_create(Call& c, MPI_Comm comm, int ndims, const int dims[], const int periods[],
                 int reorder, MPI_Comm* newcomm);
void cart_sub(Call& c, MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm);
void graph_create(Call& c, MPI_Comm comm, int nnodes, const int index[], const int edges[],
                  int reorder, MPI_Comm* newcomm);
void dist_graph_create(Call& c, MPI_Comm comm, int n, const int nodes[], const int degrees[],
                       const int targets[], const int weights[], MPI_Info info, int reorder,
                       MPI_Comm* newcomm);
void dist_graph_create_adjacent(Call& c, MPI_Comm comm, int indegree, const int sources[],
                                const int sourceweights[], int outdegree, const int destinations[],
                                const int destweights[], MPI_Info info, int reorder,
                                MPI_Comm* newcomm);
void intercomm_create(Call& c, MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm,
                      int remote_leader, int tag, MPI_Comm* newintercomm);
void intercomm_merge(Call& c, MPI_Comm intercomm, int high, MPI_Comm* newcomm);
void comm_free(Call& c, MPI_Comm* comm, MPI_Comm before);

/// An unmodeled communicating call: its time, communicator, size and request if it has them.
void opaque(Call& c, MPI_Comm comm, int count, MPI_Datatype type, MPI_Request* request);

}  // namespace hooks
}  // namespace commgauge::tracer
