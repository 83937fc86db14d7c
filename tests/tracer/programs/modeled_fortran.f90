! The Fortran twin of modeled_c.c: calls every MPI function the tracer models through the
! mpif.h binding (mpi_xxx_ symbols), with the Fortran sentinels (MPI_STATUS_IGNORE,
! MPI_STATUSES_IGNORE, MPI_IN_PLACE), 1-based Waitany/Testsome indices, integer handles, and
! counts each call and its bytes itself. Run with 4 ranks; writes OUTDIR/counts-<rank>.txt.
module counters
  implicit none
  integer, parameter :: max_counters = 128
  character(len=40) :: names(max_counters)
  integer(kind=8) :: calls(max_counters) = 0, nbytes(max_counters) = 0
  integer :: ncounters = 0, failures = 0
contains
  subroutine note(name, bytes)
    character(len=*), intent(in) :: name
    integer, intent(in) :: bytes
    integer :: i
    do i = 1, ncounters
      if (trim(names(i)) == name) then
        calls(i) = calls(i) + 1
        nbytes(i) = nbytes(i) + bytes
        return
      end if
    end do
    ncounters = ncounters + 1
    names(ncounters) = name
    calls(ncounters) = 1
    nbytes(ncounters) = bytes
  end subroutine note

  subroutine expect(ok, what, rank)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: rank
    if (.not. ok) then
      write (0, '(a,i0,a,a)') 'rank ', rank, ': wrong result: ', what
      failures = failures + 1
    end if
  end subroutine expect
end module counters

program modeled_fortran
  use counters
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 64
  integer :: ierr, rank, nprocs, right, left, i, it, done, idx, outcount, flag_count
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  integer :: rq(8), pr(8), cr(17), indices(2)
  double precision :: a(n * 4), b(n * 4)
  double precision :: c1(n), c2(n), c3(n), c4(n), c5(n), c6(n), c7(n), c8(n), c9(n), c10(n)
  double precision :: c11(n), c12(n), c13(n), c14(n), c15(n), c16(n)
  integer :: ia(n), ib(n)
  integer :: vec, vec_bytes, msg, cnt
  logical :: flag
  character(len=4096) :: outdir, path
  double precision, allocatable :: bsendbuf(:)
  integer :: bufsize, detach_size
  integer :: counts(4), displs(4), rcounts(4), rdispls(4), types(4), wcounts(4), wdispls(4)
  integer :: half, three, shared, dup, dupi, idup, created, pair, cart, row, graph, dist, dista
  integer :: inter, merged, hrank, prank, csrc, cdst, root
  integer :: world_group, first3, evens, comms(15)
  integer :: dims(2), remain(2), gindex(4), gedges(8), src(1), dst(1), weights(1), degrees(1)
  logical :: periods(2), remain_l(2)

  call MPI_Init(ierr)
  call note('MPI_Init', 0)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, outdir)
  if (nprocs /= 4 .or. len_trim(outdir) == 0) then
    if (rank == 0) write (0, *) 'usage: mpirun -np 4 modeled_fortran OUTDIR'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do i = 1, n * 4
    a(i) = rank * 1000 + i - 1
  end do
  ia = rank

  call MPI_Type_vector(3, 2, 4, MPI_DOUBLE_PRECISION, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Type_size(vec, vec_bytes, ierr)

  ! ---- blocking point to point ----
  if (mod(rank, 2) == 0) then
    call MPI_Send(a, 1, vec, right, 1, MPI_COMM_WORLD, ierr); call note('MPI_Send', vec_bytes)
    call MPI_Recv(b, 1, vec, left, 1, MPI_COMM_WORLD, st, ierr); call note('MPI_Recv', vec_bytes)
    call MPI_Ssend(ia, 5, MPI_INTEGER, right, 2, MPI_COMM_WORLD, ierr); call note('MPI_Ssend', 20)
    call MPI_Recv(ib, 5, MPI_INTEGER, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call note('MPI_Recv', 20)
  else
    call MPI_Recv(b, 1, vec, left, 1, MPI_COMM_WORLD, st, ierr); call note('MPI_Recv', vec_bytes)
    call MPI_Send(a, 1, vec, right, 1, MPI_COMM_WORLD, ierr); call note('MPI_Send', vec_bytes)
    call MPI_Recv(ib, 5, MPI_INTEGER, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call note('MPI_Recv', 20)
    call MPI_Ssend(ia, 5, MPI_INTEGER, right, 2, MPI_COMM_WORLD, ierr); call note('MPI_Ssend', 20)
  end if
  call expect(b(1) == left * 1000, 'vector receive', rank)

  bufsize = 4 * (n * 8 + MPI_BSEND_OVERHEAD)
  allocate (bsendbuf(bufsize / 8 + 1))
  call MPI_Buffer_attach(bsendbuf, bufsize, ierr)
  call MPI_Bsend(a, n, MPI_DOUBLE_PRECISION, right, 3, MPI_COMM_WORLD, ierr)
  call note('MPI_Bsend', n * 8)
  call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
  call note('MPI_Recv', n * 8)
  call expect(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 3, 'wildcard receive status', rank)

  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', n * 8)
  call MPI_Barrier(MPI_COMM_WORLD, ierr); call note('MPI_Barrier', 0)
  call MPI_Rsend(a, n, MPI_DOUBLE_PRECISION, right, 4, MPI_COMM_WORLD, ierr)
  call note('MPI_Rsend', n * 8)
  call MPI_Wait(rq(1), st, ierr); call note('MPI_Wait', 0)

  call MPI_Sendrecv(a, 10, MPI_DOUBLE_PRECISION, right, 5, b, 20, MPI_DOUBLE_PRECISION, &
                    MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, st, ierr)
  call note('MPI_Sendrecv', 80)
  call expect(st(MPI_SOURCE) == left, 'sendrecv wildcard source', rank)
  call MPI_Sendrecv_replace(b, 7, MPI_DOUBLE_PRECISION, left, 6, right, 6, MPI_COMM_WORLD, &
                            MPI_STATUS_IGNORE, ierr)
  call note('MPI_Sendrecv_replace', 56)

  ! ---- nonblocking point to point ----
  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', n * 8)
  call MPI_Irecv(ib, n, MPI_INTEGER, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Irecv', n * 4)
  call MPI_Isend(a, n, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD, rq(3), ierr)
  call note('MPI_Isend', n * 8)
  call MPI_Issend(ia, n, MPI_INTEGER, right, 8, MPI_COMM_WORLD, rq(4), ierr)
  call note('MPI_Issend', n * 4)
  call MPI_Waitall(4, rq, MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)

  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, left, 9, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', n * 8)
  call MPI_Ibsend(a, n, MPI_DOUBLE_PRECISION, right, 9, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Ibsend', n * 8)
  do done = 1, 2
    call MPI_Waitany(2, rq, idx, st, ierr); call note('MPI_Waitany', 0)
    call expect(idx >= 1 .and. idx <= 2, 'Waitany index is 1-based', rank)
  end do
  call MPI_Buffer_detach(bsendbuf, detach_size, ierr)

  call MPI_Irecv(b, n, MPI_DOUBLE_PRECISION, left, 10, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', n * 8)
  call MPI_Barrier(MPI_COMM_WORLD, ierr); call note('MPI_Barrier', 0)
  call MPI_Irsend(a, n, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Irsend', n * 8)
  call MPI_Waitsome(2, rq, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call note('MPI_Waitsome', 0)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)

  ! Polling.
  call MPI_Irecv(b, 3, MPI_DOUBLE_PRECISION, left, 11, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', 24)
  call MPI_Isend(a, 3, MPI_DOUBLE_PRECISION, right, 11, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Isend', 24)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(rq(1), flag, st, ierr); call note('MPI_Test', 0)
  end do
  flag = .false.
  do while (.not. flag)
    call MPI_Test(rq(2), flag, MPI_STATUS_IGNORE, ierr); call note('MPI_Test', 0)
  end do
  call MPI_Irecv(b, 3, MPI_DOUBLE_PRECISION, left, 12, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', 24)
  call MPI_Isend(a, 3, MPI_DOUBLE_PRECISION, right, 12, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Isend', 24)
  done = 0
  do while (done < 2)
    call MPI_Testany(2, rq, idx, flag, st, ierr); call note('MPI_Testany', 0)
    if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
  end do
  call MPI_Irecv(b, 3, MPI_DOUBLE_PRECISION, left, 13, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', 24)
  call MPI_Isend(a, 3, MPI_DOUBLE_PRECISION, right, 13, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Isend', 24)
  done = 0
  do while (done < 2)
    call MPI_Testsome(2, rq, outcount, indices, sts, ierr); call note('MPI_Testsome', 0)
    if (outcount /= MPI_UNDEFINED) done = done + outcount
  end do
  call MPI_Irecv(b, 3, MPI_DOUBLE_PRECISION, left, 14, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', 24)
  call MPI_Isend(a, 3, MPI_DOUBLE_PRECISION, right, 14, MPI_COMM_WORLD, rq(2), ierr)
  call note('MPI_Isend', 24)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, rq, flag, MPI_STATUSES_IGNORE, ierr); call note('MPI_Testall', 0)
  end do

  ! ---- persistent requests ----
  call MPI_Recv_init(b, n, MPI_DOUBLE_PRECISION, left, 15, MPI_COMM_WORLD, pr(1), ierr)
  call note('MPI_Recv_init', n * 8)
  call MPI_Send_init(a, n, MPI_DOUBLE_PRECISION, right, 15, MPI_COMM_WORLD, pr(2), ierr)
  call note('MPI_Send_init', n * 8)
  call MPI_Recv_init(ib, 4, MPI_INTEGER, left, 16, MPI_COMM_WORLD, pr(3), ierr)
  call note('MPI_Recv_init', 16)
  call MPI_Ssend_init(ia, 4, MPI_INTEGER, right, 16, MPI_COMM_WORLD, pr(4), ierr)
  call note('MPI_Ssend_init', 16)
  do it = 1, 3
    call MPI_Startall(4, pr, ierr); call note('MPI_Startall', 0)
    call MPI_Waitall(4, pr, MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)
  end do
  call MPI_Start(pr(1), ierr); call note('MPI_Start', 0)
  call MPI_Start(pr(2), ierr); call note('MPI_Start', 0)
  call MPI_Wait(pr(1), st, ierr); call note('MPI_Wait', 0)
  call MPI_Wait(pr(2), st, ierr); call note('MPI_Wait', 0)
  bufsize = 2 * (n * 8 + MPI_BSEND_OVERHEAD)
  call MPI_Buffer_attach(bsendbuf, bufsize, ierr)
  call MPI_Recv_init(b, n, MPI_DOUBLE_PRECISION, left, 17, MPI_COMM_WORLD, pr(5), ierr)
  call note('MPI_Recv_init', n * 8)
  call MPI_Bsend_init(a, n, MPI_DOUBLE_PRECISION, right, 17, MPI_COMM_WORLD, pr(6), ierr)
  call note('MPI_Bsend_init', n * 8)
  call MPI_Recv_init(b(n + 1), n, MPI_DOUBLE_PRECISION, left, 18, MPI_COMM_WORLD, pr(7), ierr)
  call note('MPI_Recv_init', n * 8)
  call MPI_Rsend_init(a, n, MPI_DOUBLE_PRECISION, right, 18, MPI_COMM_WORLD, pr(8), ierr)
  call note('MPI_Rsend_init', n * 8)
  call MPI_Start(pr(5), ierr); call note('MPI_Start', 0)
  call MPI_Start(pr(7), ierr); call note('MPI_Start', 0)
  call MPI_Barrier(MPI_COMM_WORLD, ierr); call note('MPI_Barrier', 0)
  call MPI_Start(pr(6), ierr); call note('MPI_Start', 0)
  call MPI_Start(pr(8), ierr); call note('MPI_Start', 0)
  call MPI_Waitall(4, pr(5), MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)
  call MPI_Buffer_detach(bsendbuf, detach_size, ierr)
  do i = 1, 8
    call MPI_Request_free(pr(i), ierr); call note('MPI_Request_free', 0)
  end do

  ! ---- probes ----
  call MPI_Send(a, 6, MPI_DOUBLE_PRECISION, right, 20, MPI_COMM_WORLD, ierr)
  call note('MPI_Send', 48)
  call MPI_Probe(left, 20, MPI_COMM_WORLD, st, ierr); call note('MPI_Probe', 0)
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt, ierr)
  call MPI_Recv(b, cnt, MPI_DOUBLE_PRECISION, left, 20, MPI_COMM_WORLD, st, ierr)
  call note('MPI_Recv', cnt * 8)
  call MPI_Isend(a, 2, MPI_DOUBLE_PRECISION, right, 21, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Isend', 16)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, flag, st, ierr); call note('MPI_Iprobe', 0)
  end do
  call MPI_Recv(b, 2, MPI_DOUBLE_PRECISION, st(MPI_SOURCE), 21, MPI_COMM_WORLD, st, ierr)
  call note('MPI_Recv', 16)
  call MPI_Wait(rq(1), MPI_STATUS_IGNORE, ierr); call note('MPI_Wait', 0)
  call MPI_Send(a, 9, MPI_DOUBLE_PRECISION, right, 22, MPI_COMM_WORLD, ierr)
  call note('MPI_Send', 72)
  call MPI_Mprobe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, msg, st, ierr); call note('MPI_Mprobe', 0)
  call MPI_Mrecv(b, 9, MPI_DOUBLE_PRECISION, msg, st, ierr); call note('MPI_Mrecv', 72)
  call MPI_Isend(a, 4, MPI_DOUBLE_PRECISION, right, 23, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Isend', 32)
  flag = .false.
  do while (.not. flag)
    call MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, flag, msg, st, ierr)
    call note('MPI_Improbe', 0)
  end do
  call MPI_Imrecv(b, 4, MPI_DOUBLE_PRECISION, msg, rq(2), ierr); call note('MPI_Imrecv', 32)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)

  call MPI_Irecv(b, 1, MPI_DOUBLE_PRECISION, rank, 999, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Irecv', 8)
  call MPI_Cancel(rq(1), ierr); call note('MPI_Cancel', 0)
  call MPI_Wait(rq(1), st, ierr); call note('MPI_Wait', 0)
  call MPI_Test_cancelled(st, flag, ierr); call note('MPI_Test_cancelled', 0)
  call expect(flag, 'cancelled receive', rank)
  call MPI_Isend(a, 5, MPI_DOUBLE_PRECISION, right, 24, MPI_COMM_WORLD, rq(1), ierr)
  call note('MPI_Isend', 40)
  call MPI_Request_free(rq(1), ierr); call note('MPI_Request_free', 0)
  call MPI_Recv(b, 5, MPI_DOUBLE_PRECISION, left, 24, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call note('MPI_Recv', 40)

  ! ---- collectives on MPI_COMM_WORLD ----
  counts = (/1, 2, 3, 4/)
  displs = (/0, 1, 3, 6/)
  do i = 1, 4
    rcounts(i) = rank + 1
    rdispls(i) = (i - 1) * 4
  end do
  types = MPI_DOUBLE_PRECISION
  wcounts = 2
  wdispls = (/0, 16, 32, 48/)
  call MPI_Barrier(MPI_COMM_WORLD, ierr); call note('MPI_Barrier', 0)
  call MPI_Bcast(a, n, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr); call note('MPI_Bcast', n * 8)
  call MPI_Reduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_SUM, 2, MPI_COMM_WORLD, ierr)
  call note('MPI_Reduce', n * 8)
  call MPI_Allreduce(a, b, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call note('MPI_Allreduce', n * 8)
  call MPI_Allreduce(MPI_IN_PLACE, b, 8, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call note('MPI_Allreduce', 64)
  call MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call note('MPI_Reduce_scatter', 80)
  call MPI_Reduce_scatter_block(a, b, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call note('MPI_Reduce_scatter_block', 24)
  call MPI_Scan(a, b, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr); call note('MPI_Scan', 40)
  call MPI_Exscan(a, b, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call note('MPI_Exscan', 40)
  call MPI_Gather(a, 3, MPI_DOUBLE_PRECISION, b, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call note('MPI_Gather', 24)
  call MPI_Gatherv(a, rank + 1, MPI_DOUBLE_PRECISION, b, counts, displs, MPI_DOUBLE_PRECISION, 3, &
                   MPI_COMM_WORLD, ierr)
  call note('MPI_Gatherv', (rank + 1) * 8)
  call MPI_Scatter(a, 2, MPI_DOUBLE_PRECISION, b, 2, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr)
  call note('MPI_Scatter', merge(16, 0, rank == 1))
  call MPI_Scatterv(a, counts, displs, MPI_DOUBLE_PRECISION, b, rank + 1, MPI_DOUBLE_PRECISION, 2, &
                    MPI_COMM_WORLD, ierr)
  call note('MPI_Scatterv', merge(80, 0, rank == 2))
  call MPI_Allgather(a, 2, MPI_DOUBLE_PRECISION, b, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call note('MPI_Allgather', 16)
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 3, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD, ierr)
  call note('MPI_Allgather', 24)
  call MPI_Allgatherv(a, rank + 1, MPI_DOUBLE_PRECISION, b, counts, displs, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
  call note('MPI_Allgatherv', (rank + 1) * 8)
  call MPI_Alltoall(a, 4, MPI_DOUBLE_PRECISION, b, 4, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call note('MPI_Alltoall', 32)
  call MPI_Alltoallv(a, rcounts, rdispls, MPI_DOUBLE_PRECISION, b, counts, rdispls, &
                     MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call note('MPI_Alltoallv', 4 * (rank + 1) * 8)
  call MPI_Alltoallw(a, wcounts, wdispls, types, b, wcounts, wdispls, types, MPI_COMM_WORLD, ierr)
  call note('MPI_Alltoallw', 64)

  ! ---- nonblocking collectives ----
  call MPI_Ibarrier(MPI_COMM_WORLD, cr(1), ierr); call note('MPI_Ibarrier', 0)
  call MPI_Ibcast(c1, 8, MPI_DOUBLE_PRECISION, 3, MPI_COMM_WORLD, cr(2), ierr); call note('MPI_Ibcast', 64)
  call MPI_Ireduce(a, c2, 8, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, cr(3), ierr)
  call note('MPI_Ireduce', 64)
  call MPI_Iallreduce(a, c3, 8, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, cr(4), ierr)
  call note('MPI_Iallreduce', 64)
  call MPI_Ireduce_scatter(a, c4, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, cr(5), ierr)
  call note('MPI_Ireduce_scatter', 80)
  call MPI_Ireduce_scatter_block(a, c5, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, cr(6), ierr)
  call note('MPI_Ireduce_scatter_block', 16)
  call MPI_Iscan(a, c6, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, cr(7), ierr)
  call note('MPI_Iscan', 24)
  call MPI_Iexscan(a, c7, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, cr(8), ierr)
  call note('MPI_Iexscan', 24)
  call MPI_Igather(a, 2, MPI_DOUBLE_PRECISION, c8, 2, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, &
                   cr(9), ierr)
  call note('MPI_Igather', 16)
  call MPI_Igatherv(a, rank + 1, MPI_DOUBLE_PRECISION, c9, counts, displs, MPI_DOUBLE_PRECISION, &
                    0, MPI_COMM_WORLD, cr(10), ierr)
  call note('MPI_Igatherv', (rank + 1) * 8)
  call MPI_Iscatter(a, 2, MPI_DOUBLE_PRECISION, c10, 2, MPI_DOUBLE_PRECISION, 2, MPI_COMM_WORLD, &
                    cr(11), ierr)
  call note('MPI_Iscatter', merge(16, 0, rank == 2))
  call MPI_Iscatterv(a, counts, displs, MPI_DOUBLE_PRECISION, c11, rank + 1, MPI_DOUBLE_PRECISION, &
                     3, MPI_COMM_WORLD, cr(12), ierr)
  call note('MPI_Iscatterv', merge(80, 0, rank == 3))
  call MPI_Iallgather(a, 2, MPI_DOUBLE_PRECISION, c12, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, &
                      cr(13), ierr)
  call note('MPI_Iallgather', 16)
  call MPI_Iallgatherv(a, rank + 1, MPI_DOUBLE_PRECISION, c13, counts, displs, &
                       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, cr(14), ierr)
  call note('MPI_Iallgatherv', (rank + 1) * 8)
  call MPI_Ialltoall(a, 2, MPI_DOUBLE_PRECISION, c14, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, &
                     cr(15), ierr)
  call note('MPI_Ialltoall', 16)
  call MPI_Ialltoallv(a, rcounts, rdispls, MPI_DOUBLE_PRECISION, c15, counts, rdispls, &
                      MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, cr(16), ierr)
  call note('MPI_Ialltoallv', 4 * (rank + 1) * 8)
  call MPI_Ialltoallw(a, wcounts, wdispls, types, c16, wcounts, wdispls, types, MPI_COMM_WORLD, &
                      cr(17), ierr)
  call note('MPI_Ialltoallw', 64)
  call MPI_Waitall(17, cr, MPI_STATUSES_IGNORE, ierr); call note('MPI_Waitall', 0)

  ! ---- communicators ----
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr); call note('MPI_Comm_split', 0)
  if (rank < 3) then
    call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, three, ierr)
  else
    call MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, three, ierr)
  end if
  call note('MPI_Comm_split', 0)
  call expect((rank < 3) .eqv. (three /= MPI_COMM_NULL), 'MPI_UNDEFINED split', rank)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, shared, ierr)
  call note('MPI_Comm_split_type', 0)
  call MPI_Comm_dup(half, dup, ierr); call note('MPI_Comm_dup', 0)
  call MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, dupi, ierr)
  call note('MPI_Comm_dup_with_info', 0)
  call MPI_Comm_idup(MPI_COMM_WORLD, idup, rq(1), ierr); call note('MPI_Comm_idup', 0)
  call MPI_Wait(rq(1), MPI_STATUS_IGNORE, ierr); call note('MPI_Wait', 0)
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  call MPI_Group_incl(world_group, 3, (/0, 1, 2/), first3, ierr)
  call MPI_Group_incl(world_group, 2, (/0, 2/), evens, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, first3, created, ierr); call note('MPI_Comm_create', 0)
  pair = MPI_COMM_NULL
  if (mod(rank, 2) == 0) then
    call MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, pair, ierr)
    call note('MPI_Comm_create_group', 0)
  end if
  dims = (/2, 2/)
  periods = (/.true., .true./)
  remain_l = (/.false., .true./)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call note('MPI_Cart_create', 0)
  call MPI_Cart_sub(cart, remain_l, row, ierr); call note('MPI_Cart_sub', 0)
  gindex = (/2, 4, 6, 8/)
  gedges = (/1, 3, 0, 2, 1, 3, 2, 0/)
  call MPI_Graph_create(MPI_COMM_WORLD, 4, gindex, gedges, .false., graph, ierr)
  call note('MPI_Graph_create', 0)
  src(1) = left
  dst(1) = right
  weights(1) = 1
  degrees(1) = 1
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, weights, 1, dst, weights, &
                                      MPI_INFO_NULL, .false., dista, ierr)
  call note('MPI_Dist_graph_create_adjacent', 0)
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, (/rank/), degrees, dst, weights, MPI_INFO_NULL, &
                             .false., dist, ierr)
  call note('MPI_Dist_graph_create', 0)
  call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, merge(3, 2, mod(rank, 2) == 0), 30, inter, ierr)
  call note('MPI_Intercomm_create', 0)
  call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged, ierr); call note('MPI_Intercomm_merge', 0)

  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Allreduce(a, b, 4, MPI_DOUBLE_PRECISION, MPI_SUM, half, ierr); call note('MPI_Allreduce', 32)
  call MPI_Bcast(b, 4, MPI_DOUBLE_PRECISION, 1, dup, ierr); call note('MPI_Bcast', 32)
  if (three /= MPI_COMM_NULL) then
    call MPI_Barrier(three, ierr); call note('MPI_Barrier', 0)
  end if
  if (created /= MPI_COMM_NULL) then
    call MPI_Allreduce(a, b, 2, MPI_DOUBLE_PRECISION, MPI_SUM, created, ierr)
    call note('MPI_Allreduce', 16)
  end if
  if (pair /= MPI_COMM_NULL) then
    call MPI_Comm_rank(pair, prank, ierr)
    call MPI_Sendrecv(a, 3, MPI_DOUBLE_PRECISION, 1 - prank, 40, b, 3, MPI_DOUBLE_PRECISION, &
                      1 - prank, 40, pair, MPI_STATUS_IGNORE, ierr)
    call note('MPI_Sendrecv', 24)
  end if
  call MPI_Cart_shift(cart, 1, 1, csrc, cdst, ierr)
  call MPI_Sendrecv(a, 2, MPI_DOUBLE_PRECISION, cdst, 41, b, 2, MPI_DOUBLE_PRECISION, csrc, 41, &
                    cart, MPI_STATUS_IGNORE, ierr)
  call note('MPI_Sendrecv', 16)
  call MPI_Allgather(a, 1, MPI_DOUBLE_PRECISION, b, 1, MPI_DOUBLE_PRECISION, row, ierr)
  call note('MPI_Allgather', 8)
  call MPI_Barrier(graph, ierr); call note('MPI_Barrier', 0)
  call MPI_Barrier(dista, ierr); call note('MPI_Barrier', 0)
  call MPI_Barrier(dist, ierr); call note('MPI_Barrier', 0)
  call MPI_Barrier(shared, ierr); call note('MPI_Barrier', 0)
  call MPI_Barrier(dupi, ierr); call note('MPI_Barrier', 0)
  call MPI_Barrier(idup, ierr); call note('MPI_Barrier', 0)
  if (mod(rank, 2) == 0) then
    call MPI_Send(a, 6, MPI_DOUBLE_PRECISION, hrank, 42, inter, ierr); call note('MPI_Send', 48)
  else
    call MPI_Recv(b, 6, MPI_DOUBLE_PRECISION, hrank, 42, inter, st, ierr); call note('MPI_Recv', 48)
    call expect(st(MPI_SOURCE) == hrank, 'intercommunicator status', rank)
  end if
  if (mod(rank, 2) == 0) then
    root = merge(MPI_ROOT, MPI_PROC_NULL, hrank == 0)
  else
    root = 0
  end if
  call MPI_Bcast(a, 5, MPI_DOUBLE_PRECISION, root, inter, ierr); call note('MPI_Bcast', 40)
  call MPI_Allreduce(a, b, 3, MPI_DOUBLE_PRECISION, MPI_SUM, merged, ierr)
  call note('MPI_Allreduce', 24)

  comms = (/half, three, shared, dup, dupi, idup, created, pair, cart, row, graph, dist, dista, &
            inter, merged/)
  do i = 1, 15
    if (comms(i) /= MPI_COMM_NULL) then
      call MPI_Comm_free(comms(i), ierr); call note('MPI_Comm_free', 0)
    end if
  end do
  call MPI_Group_free(world_group, ierr)
  call MPI_Group_free(first3, ierr)
  call MPI_Group_free(evens, ierr)
  call MPI_Type_free(vec, ierr)

  call note('MPI_Finalize', 0)
  write (path, '(a,a,i0,a)') trim(outdir), '/counts-', rank, '.txt'
  open (unit=11, file=trim(path), status='replace', action='write')
  do i = 1, ncounters
    write (11, '(a,1x,i0,1x,i0)') trim(names(i)), calls(i), nbytes(i)
  end do
  close (11)
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1
end program modeled_fortran
