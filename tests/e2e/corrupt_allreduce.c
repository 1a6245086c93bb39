/* Fault injection through MPI's profiling interface (PMPI): preloaded into plumb, this wraps
 * MPI_Allreduce and, on rank 1, overwrites the first float of every result. plumb's check must
 * count the wrong elements and exit 1. */
#include <mpi.h>

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (rank == 1 && count > 0 && type == MPI_FLOAT) ((float*)recv)[0] = 12345.0f;
  return rc;
}
