#include "comm/mpi_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>

#include "common/error.h"

namespace plumb::comm {
namespace {

// ---- 16-bit floats: MPI has no half or bfloat16 type, so they travel as MPI_UINT16_T and reduce
// through user-defined operations that compute in float and round once, as a native half add does.

struct HalfCodec {
  static float decode(uint16_t v) { return half_to_float(v); }
  static uint16_t encode(float v) { return float_to_half(v); }
};
struct BFloat16Codec {
  static float decode(uint16_t v) { return bfloat16_to_float(v); }
  static uint16_t encode(float v) { return float_to_bfloat16(v); }
};

template <class Codec, ReduceOp kOp>
void reduce_16bit(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    const double result = combine(kOp, Codec::decode(a[i]), Codec::decode(b[i]));
    b[i] = Codec::encode(static_cast<float>(result));
  }
}

// Created once after MPI_Init; MPI_Finalize releases them.
struct SixteenBitOps {
  MPI_Op half[4];
  MPI_Op bfloat16[4];

  SixteenBitOps() {
    MPI_Op_create(&reduce_16bit<HalfCodec, ReduceOp::kSum>, 1, &half[0]);
    MPI_Op_create(&reduce_16bit<HalfCodec, ReduceOp::kProd>, 1, &half[1]);
    MPI_Op_create(&reduce_16bit<HalfCodec, ReduceOp::kMax>, 1, &half[2]);
    MPI_Op_create(&reduce_16bit<HalfCodec, ReduceOp::kMin>, 1, &half[3]);
    MPI_Op_create(&reduce_16bit<BFloat16Codec, ReduceOp::kSum>, 1, &bfloat16[0]);
    MPI_Op_create(&reduce_16bit<BFloat16Codec, ReduceOp::kProd>, 1, &bfloat16[1]);
    MPI_Op_create(&reduce_16bit<BFloat16Codec, ReduceOp::kMax>, 1, &bfloat16[2]);
    MPI_Op_create(&reduce_16bit<BFloat16Codec, ReduceOp::kMin>, 1, &bfloat16[3]);
  }
};

const SixteenBitOps& sixteen_bit_ops() {
  static const SixteenBitOps kOps;
  return kOps;
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kFloat16:
    case DataType::kBFloat16: return MPI_UINT16_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

// avg is reduced as sum; the caller divides afterwards.
MPI_Op mpi_op(ReduceOp op, DataType type) {
  const size_t index = op == ReduceOp::kAvg ? 0 : static_cast<size_t>(op);
  if (type == DataType::kFloat16) return sixteen_bit_ops().half[index];
  if (type == DataType::kBFloat16) return sixteen_bit_ops().bfloat16[index];
  const MPI_Op kBuiltin[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  return kBuiltin[index];
}

int mpi_count(size_t count) {
  if (count > static_cast<size_t>(INT_MAX)) {
    throw Error(fmt::format("the MPI backend passes counts as int: {} elements exceed {}; lower "
                            "--max-bytes",
                            count, INT_MAX));
  }
  return static_cast<int>(count);
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv, Threads threads) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, threads == kThreads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    owns_ = true;
  }
}

bool MpiSession::threads() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && !finalized) MPI_Comm_free(&comm_);
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::world() {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false);
}

namespace {

// Runs fn on the communicator of the ranks sharing this rank's host (its shared-memory domain).
template <class Fn>
int on_this_host(MPI_Comm comm, int rank, Fn&& fn) {
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  const int result = fn(local);
  MPI_Comm_free(&local);
  return result;
}

}  // namespace

int MpiCommunicator::node_id() {
  return on_this_host(comm_, rank_, [&](MPI_Comm local) {
    int lowest = rank_;
    MPI_Allreduce(&rank_, &lowest, 1, MPI_INT, MPI_MIN, local);
    return lowest;
  });
}

int MpiCommunicator::local_rank() {
  return on_this_host(comm_, rank_, [](MPI_Comm local) {
    int rank = 0;
    MPI_Comm_rank(local, &rank);
    return rank;
  });
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out);
  if (out == MPI_COMM_NULL) return nullptr;
  return std::make_unique<MpiCommunicator>(out, true);
}

std::unique_ptr<Buffer> MpiCommunicator::allocate(size_t bytes) {
  return allocate_host_buffer(bytes);
}

void MpiCommunicator::all_reduce(const void* send, void* recv, size_t count, DataType type,
                                 ReduceOp op) {
  MPI_Allreduce(send, recv, mpi_count(count), mpi_type(type), mpi_op(op, type), comm_);
  if (op == ReduceOp::kAvg) divide_elements(recv, count, type, size_);
}

void MpiCommunicator::all_gather(const void* send, void* recv, size_t send_count, DataType type) {
  const int n = mpi_count(send_count);
  MPI_Allgather(send, n, mpi_type(type), recv, n, mpi_type(type), comm_);
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, size_t recv_count,
                                     DataType type, ReduceOp op) {
  mpi_count(recv_count * static_cast<size_t>(size_));
  MPI_Reduce_scatter_block(send, recv, mpi_count(recv_count), mpi_type(type), mpi_op(op, type),
                           comm_);
  if (op == ReduceOp::kAvg) divide_elements(recv, recv_count, type, size_);
}

void MpiCommunicator::all_to_all(const void* send, void* recv, size_t count_per_peer,
                                 DataType type) {
  mpi_count(count_per_peer * static_cast<size_t>(size_));
  const int n = mpi_count(count_per_peer);
  MPI_Alltoall(send, n, mpi_type(type), recv, n, mpi_type(type), comm_);
}

void MpiCommunicator::broadcast(const void* /*send*/, void* recv, size_t count, DataType type,
                                int root) {
  // The root's receive buffer already holds its input (Collective::recv_starts_with_input), so
  // the broadcast runs in place on it, with no extra copy inside the timed loop.
  MPI_Bcast(recv, mpi_count(count), mpi_type(type), root, comm_);
}

void MpiCommunicator::reduce(const void* send, void* recv, size_t count, DataType type,
                             ReduceOp op, int root) {
  MPI_Reduce(send, recv, mpi_count(count), mpi_type(type), mpi_op(op, type), root, comm_);
  if (op == ReduceOp::kAvg && rank_ == root) divide_elements(recv, count, type, size_);
}

void MpiCommunicator::send_recv(const void* send, void* recv, size_t count, DataType type, int to,
                                int from) {
  const int n = mpi_count(count);
  MPI_Sendrecv(send, n, mpi_type(type), to, 0, recv, n, mpi_type(type), from, 0, comm_,
               MPI_STATUS_IGNORE);
}

void MpiCommunicator::start_timer() { timer_start_ = MPI_Wtime(); }

double MpiCommunicator::stop_timer() { return MPI_Wtime() - timer_start_; }

void MpiCommunicator::barrier() { MPI_Barrier(comm_); }

namespace {

// Counts and displacements of a variable-size gather: what MPI_Gatherv/Allgatherv need.
struct Layout {
  std::vector<int> counts;
  std::vector<int> offsets;
  size_t total = 0;
};

Layout layout_of(std::vector<int> counts) {
  Layout l;
  l.counts = std::move(counts);
  l.offsets.resize(l.counts.size());
  size_t next = 0;
  for (size_t r = 0; r < l.counts.size(); ++r) {
    l.offsets[r] = mpi_count(next);
    next += static_cast<size_t>(l.counts[r]);
  }
  l.total = next;
  return l;
}

// The sizes of every rank's contribution, on `root` (or on every rank when root < 0).
Layout gather_layout(MPI_Comm comm, int size, int rank, size_t mine, int root) {
  const int count = mpi_count(mine);
  std::vector<int> counts(root < 0 || rank == root ? static_cast<size_t>(size) : 0);
  if (root < 0) {
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  } else {
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  }
  return layout_of(std::move(counts));
}

std::vector<std::string> split_strings(const std::string& all, const Layout& l) {
  std::vector<std::string> out;
  for (size_t r = 0; r < l.counts.size(); ++r) {
    out.push_back(all.substr(static_cast<size_t>(l.offsets[r]), static_cast<size_t>(l.counts[r])));
  }
  return out;
}

}  // namespace

std::vector<double> MpiCommunicator::gather(std::span<const double> values, int root) {
  const Layout l = gather_layout(comm_, size_, rank_, values.size(), root);
  std::vector<double> out(l.total);
  MPI_Gatherv(values.data(), mpi_count(values.size()), MPI_DOUBLE, out.data(), l.counts.data(),
              l.offsets.data(), MPI_DOUBLE, root, comm_);
  return out;
}

std::vector<std::string> MpiCommunicator::gather_strings(const std::string& value, int root) {
  const Layout l = gather_layout(comm_, size_, rank_, value.size(), root);
  std::string all(l.total, '\0');
  MPI_Gatherv(value.data(), mpi_count(value.size()), MPI_CHAR, all.data(), l.counts.data(),
              l.offsets.data(), MPI_CHAR, root, comm_);
  return split_strings(all, l);
}

std::vector<std::string> MpiCommunicator::all_gather_strings(const std::string& value) {
  const Layout l = gather_layout(comm_, size_, rank_, value.size(), -1);
  std::string all(l.total, '\0');
  MPI_Allgatherv(value.data(), mpi_count(value.size()), MPI_CHAR, all.data(), l.counts.data(),
                 l.offsets.data(), MPI_CHAR, comm_);
  return split_strings(all, l);
}

int MpiCommunicator::broadcast_int(int value, int root) {
  MPI_Bcast(&value, 1, MPI_INT, root, comm_);
  return value;
}

}  // namespace plumb::comm
