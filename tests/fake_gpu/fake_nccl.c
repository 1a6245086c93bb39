/* An NCCL stand-in for tests without a GPU: a one-rank communicator on host memory, with the
 * signatures of nccl.h. With one rank every collective is a copy, so a wrong count, offset or
 * argument order in plumb's backend shows up as wrong elements. FAKE_NCCL_CORRUPT=1 makes
 * ncclAllReduce write a wrong first element. */
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef void* ncclComm_t;
typedef void* cudaStream_t;

enum { kSuccess = 0, kInvalidArgument = 4, kInvalidUsage = 5 };

static size_t type_size(int type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};  /* ncclDataType_t order */
  return type >= 0 && type < 10 ? sizes[type] : 0;
}

static int copy(const void* src, void* dst, size_t count, int type) {
  if (type_size(type) == 0) return kInvalidArgument;
  if (count) memmove(dst, src, count * type_size(type));
  return kSuccess;
}

/* Point-to-point inside ncclGroupStart/End: the one rank sends to and receives from itself. */
static const void* pending_send;
static size_t pending_bytes;
static int grouped;

ncclResult_t ncclGetVersion(int* version) { *version = 22000; return kSuccess; }
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) { memset(id, 7, sizeof *id); return kSuccess; }
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  if (nranks != 1 || rank != 0 || id.internal[0] != 7) return kInvalidUsage;
  *comm = malloc(1);
  return kSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) { free(comm); return kSuccess; }
ncclResult_t ncclAllReduce(const void* s, void* r, size_t count, int type, int op, ncclComm_t c,
                           cudaStream_t st) {
  (void)op; (void)c; (void)st;
  int rc = copy(s, r, count, type);
  const char* corrupt = getenv("FAKE_NCCL_CORRUPT");
  if (rc == kSuccess && count && corrupt && corrupt[0] == '1') memset(r, 0x55, type_size(type));
  return rc;
}
ncclResult_t ncclAllGather(const void* s, void* r, size_t send_count, int type, ncclComm_t c,
                           cudaStream_t st) {
  (void)c; (void)st;
  return copy(s, r, send_count, type);
}
ncclResult_t ncclReduceScatter(const void* s, void* r, size_t recv_count, int type, int op,
                               ncclComm_t c, cudaStream_t st) {
  (void)op; (void)c; (void)st;
  return copy(s, r, recv_count, type);
}
ncclResult_t ncclBroadcast(const void* s, void* r, size_t count, int type, int root, ncclComm_t c,
                           cudaStream_t st) {
  (void)c; (void)st;
  return root == 0 ? copy(s, r, count, type) : kInvalidArgument;
}
ncclResult_t ncclReduce(const void* s, void* r, size_t count, int type, int op, int root,
                        ncclComm_t c, cudaStream_t st) {
  (void)op; (void)c; (void)st;
  return root == 0 ? copy(s, r, count, type) : kInvalidArgument;
}
ncclResult_t ncclSend(const void* s, size_t count, int type, int peer, ncclComm_t c,
                      cudaStream_t st) {
  (void)c; (void)st;
  if (!grouped || peer != 0 || type_size(type) == 0) return kInvalidUsage;
  pending_send = s;
  pending_bytes = count * type_size(type);
  return kSuccess;
}
ncclResult_t ncclRecv(void* r, size_t count, int type, int peer, ncclComm_t c, cudaStream_t st) {
  (void)c; (void)st;
  if (!grouped || peer != 0 || !pending_send || count * type_size(type) != pending_bytes) {
    return kInvalidUsage;
  }
  if (pending_bytes) memmove(r, pending_send, pending_bytes);
  pending_send = NULL;
  return kSuccess;
}
ncclResult_t ncclGroupStart(void) { grouped = 1; return kSuccess; }
ncclResult_t ncclGroupEnd(void) {
  grouped = 0;
  return pending_send ? kInvalidUsage : kSuccess;
}
const char* ncclGetErrorString(ncclResult_t r) { return r == 0 ? "no error" : "fake NCCL error"; }
