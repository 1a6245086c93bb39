#include "comm/nccl_backend.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/agreement.h"
#include "common/error.h"
#include "common/shared_library.h"

namespace plumb::comm {
namespace {

// ---- The few CUDA runtime and NCCL declarations plumb uses, restated from their public headers
// (cuda_runtime_api.h, nccl.h); enum values are part of those libraries' stable ABI.
using CudaError = int;
using CudaStream = void*;
using CudaEvent = void*;
constexpr int kCudaMemcpyHostToDevice = 1;
constexpr int kCudaMemcpyDeviceToHost = 2;

using NcclResult = int;
using NcclComm = void*;
struct NcclUniqueId {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
};
// ncclDataType_t
constexpr int kNcclInt8 = 0, kNcclInt32 = 2, kNcclFloat16 = 6, kNcclFloat32 = 7,
              kNcclFloat64 = 8, kNcclBfloat16 = 9;
// ncclRedOp_t: ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg -- the order of plumb's ReduceOp.

// The library the user named in `variable` (and only that one), else the usual names.
std::vector<std::string> candidates(const char* variable, std::vector<std::string> defaults) {
  if (const char* chosen = std::getenv(variable); chosen && *chosen) return {chosen};
  return defaults;
}

struct Cuda {
  SharedLibrary lib;
  CudaError (*get_device_count)(int*);
  CudaError (*set_device)(int);
  CudaError (*malloc)(void**, size_t);
  CudaError (*free)(void*);
  CudaError (*memcpy)(void*, const void*, size_t, int);
  CudaError (*memset)(void*, int, size_t);
  CudaError (*stream_create)(CudaStream*);
  CudaError (*stream_destroy)(CudaStream);
  CudaError (*stream_synchronize)(CudaStream);
  CudaError (*event_create)(CudaEvent*);
  CudaError (*event_destroy)(CudaEvent);
  CudaError (*event_record)(CudaEvent, CudaStream);
  CudaError (*event_synchronize)(CudaEvent);
  CudaError (*event_elapsed_time)(float*, CudaEvent, CudaEvent);
  const char* (*get_error_string)(CudaError);

  Cuda()
      : lib(candidates("PLUMB_CUDART_LIBRARY", {"libcudart.so", "libcudart.so.13",
                                                "libcudart.so.12", "libcudart.so.11.0"}),
            "install the CUDA runtime or set PLUMB_CUDART_LIBRARY"),
        get_device_count(lib.function<decltype(get_device_count)>("cudaGetDeviceCount")),
        set_device(lib.function<decltype(set_device)>("cudaSetDevice")),
        malloc(lib.function<decltype(malloc)>("cudaMalloc")),
        free(lib.function<decltype(free)>("cudaFree")),
        memcpy(lib.function<decltype(memcpy)>("cudaMemcpy")),
        memset(lib.function<decltype(memset)>("cudaMemset")),
        stream_create(lib.function<decltype(stream_create)>("cudaStreamCreate")),
        stream_destroy(lib.function<decltype(stream_destroy)>("cudaStreamDestroy")),
        stream_synchronize(lib.function<decltype(stream_synchronize)>("cudaStreamSynchronize")),
        event_create(lib.function<decltype(event_create)>("cudaEventCreate")),
        event_destroy(lib.function<decltype(event_destroy)>("cudaEventDestroy")),
        event_record(lib.function<decltype(event_record)>("cudaEventRecord")),
        event_synchronize(lib.function<decltype(event_synchronize)>("cudaEventSynchronize")),
        event_elapsed_time(lib.function<decltype(event_elapsed_time)>("cudaEventElapsedTime")),
        get_error_string(lib.function<decltype(get_error_string)>("cudaGetErrorString")) {}

  void check(CudaError e, const char* what) const {
    if (e != 0) {
      throw Error(fmt::format("CUDA error in {}: {}", what, get_error_string(e)),
                  ExitCode::kCheckFailed);
    }
  }
};

struct Nccl {
  SharedLibrary lib;
  NcclResult (*get_version)(int*);
  NcclResult (*get_unique_id)(NcclUniqueId*);
  NcclResult (*comm_init_rank)(NcclComm*, int, NcclUniqueId, int);
  NcclResult (*comm_destroy)(NcclComm);
  NcclResult (*all_reduce)(const void*, void*, size_t, int, int, NcclComm, CudaStream);
  NcclResult (*all_gather)(const void*, void*, size_t, int, NcclComm, CudaStream);
  NcclResult (*reduce_scatter)(const void*, void*, size_t, int, int, NcclComm, CudaStream);
  NcclResult (*broadcast)(const void*, void*, size_t, int, int, NcclComm, CudaStream);
  NcclResult (*reduce)(const void*, void*, size_t, int, int, int, NcclComm, CudaStream);
  NcclResult (*send)(const void*, size_t, int, int, NcclComm, CudaStream);
  NcclResult (*recv)(void*, size_t, int, int, NcclComm, CudaStream);
  NcclResult (*group_start)();
  NcclResult (*group_end)();
  const char* (*get_error_string)(NcclResult);

  Nccl()
      : lib(candidates("PLUMB_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"}),
            "install NCCL (libnccl2) or set PLUMB_NCCL_LIBRARY"),
        get_version(lib.function<decltype(get_version)>("ncclGetVersion")),
        get_unique_id(lib.function<decltype(get_unique_id)>("ncclGetUniqueId")),
        comm_init_rank(lib.function<decltype(comm_init_rank)>("ncclCommInitRank")),
        comm_destroy(lib.function<decltype(comm_destroy)>("ncclCommDestroy")),
        all_reduce(lib.function<decltype(all_reduce)>("ncclAllReduce")),
        all_gather(lib.function<decltype(all_gather)>("ncclAllGather")),
        reduce_scatter(lib.function<decltype(reduce_scatter)>("ncclReduceScatter")),
        broadcast(lib.function<decltype(broadcast)>("ncclBroadcast")),
        reduce(lib.function<decltype(reduce)>("ncclReduce")),
        send(lib.function<decltype(send)>("ncclSend")),
        recv(lib.function<decltype(recv)>("ncclRecv")),
        group_start(lib.function<decltype(group_start)>("ncclGroupStart")),
        group_end(lib.function<decltype(group_end)>("ncclGroupEnd")),
        get_error_string(lib.function<decltype(get_error_string)>("ncclGetErrorString")) {}

  void check(NcclResult r, const char* what) const {
    if (r != 0) {
      throw Error(fmt::format("NCCL error in {}: {}", what, get_error_string(r)),
                  ExitCode::kCheckFailed);
    }
  }
};

struct Libraries {
  Nccl nccl;  // opened first: it is the one most machines lack, and it needs no other library
  Cuda cuda;
};

int nccl_type(DataType type) {
  switch (type) {
    case DataType::kInt8: return kNcclInt8;
    case DataType::kInt32: return kNcclInt32;
    case DataType::kFloat16: return kNcclFloat16;
    case DataType::kBFloat16: return kNcclBfloat16;
    case DataType::kFloat32: return kNcclFloat32;
    case DataType::kFloat64: return kNcclFloat64;
  }
  return kNcclFloat32;
}

int nccl_op(ReduceOp op) { return static_cast<int>(op); }

class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::shared_ptr<Libraries> libs, size_t bytes) : libs_(std::move(libs)), size_(bytes) {
    libs_->cuda.check(libs_->cuda.malloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
  }
  ~DeviceBuffer() override { libs_->cuda.free(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() override { return data_; }
  size_t size() const override { return size_; }
  void upload(const void* host, size_t bytes) override {
    if (bytes) libs_->cuda.check(libs_->cuda.memcpy(data_, host, bytes, kCudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void download(void* host, size_t bytes) const override {
    if (bytes) libs_->cuda.check(libs_->cuda.memcpy(host, data_, bytes, kCudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  void fill(unsigned char value, size_t bytes) override {
    if (bytes) libs_->cuda.check(libs_->cuda.memset(data_, value, bytes), "cudaMemset");
  }

 private:
  std::shared_ptr<Libraries> libs_;
  void* data_ = nullptr;
  size_t size_;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::shared_ptr<Libraries> libs, std::unique_ptr<MpiCommunicator> control)
      : libs_(std::move(libs)), control_(std::move(control)) {
    try {
      const Cuda& cuda = libs_->cuda;
      cuda.check(cuda.stream_create(&stream_), "cudaStreamCreate");
      cuda.check(cuda.event_create(&start_), "cudaEventCreate");
      cuda.check(cuda.event_create(&stop_), "cudaEventCreate");
      NcclUniqueId id{};
      if (control_->rank() == 0) nccl().check(nccl().get_unique_id(&id), "ncclGetUniqueId");
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, control_->handle());
      nccl().check(nccl().comm_init_rank(&comm_, control_->size(), id, control_->rank()),
                   "ncclCommInitRank");
    } catch (...) {
      release();
      throw;
    }
  }
  ~NcclCommunicator() override { release(); }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  std::string_view backend() const override { return "nccl"; }
  int rank() const override { return control_->rank(); }
  int size() const override { return control_->size(); }
  int node_id() override { return control_->node_id(); }

  std::unique_ptr<Communicator> split(int color, int key) override {
    std::unique_ptr<Communicator> sub = control_->split(color, key);
    if (!sub) return nullptr;
    std::unique_ptr<MpiCommunicator> mpi(static_cast<MpiCommunicator*>(sub.release()));
    return std::make_unique<NcclCommunicator>(libs_, std::move(mpi));
  }

  std::unique_ptr<Buffer> allocate(size_t bytes) override {
    return std::make_unique<DeviceBuffer>(libs_, bytes);
  }

  void all_reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) override {
    nccl().check(nccl().all_reduce(send, recv, count, nccl_type(type), nccl_op(op), comm_, stream_),
                 "ncclAllReduce");
  }
  void all_gather(const void* send, void* recv, size_t send_count, DataType type) override {
    nccl().check(nccl().all_gather(send, recv, send_count, nccl_type(type), comm_, stream_),
                 "ncclAllGather");
  }
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type,
                      ReduceOp op) override {
    nccl().check(nccl().reduce_scatter(send, recv, recv_count, nccl_type(type), nccl_op(op), comm_,
                                       stream_),
                 "ncclReduceScatter");
  }
  void all_to_all(const void* send, void* recv, size_t count, DataType type) override {
    const size_t block = count * info(type).size;
    nccl().check(nccl().group_start(), "ncclGroupStart");
    for (int peer = 0; peer < size(); ++peer) {
      const auto offset = static_cast<size_t>(peer) * block;
      nccl().check(nccl().send(static_cast<const char*>(send) + offset, count, nccl_type(type),
                               peer, comm_, stream_),
                   "ncclSend");
      nccl().check(nccl().recv(static_cast<char*>(recv) + offset, count, nccl_type(type), peer,
                               comm_, stream_),
                   "ncclRecv");
    }
    nccl().check(nccl().group_end(), "ncclGroupEnd");
  }
  void broadcast(const void* send, void* recv, size_t count, DataType type, int root) override {
    nccl().check(nccl().broadcast(send, recv, count, nccl_type(type), root, comm_, stream_),
                 "ncclBroadcast");
  }
  void reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
              int root) override {
    nccl().check(
        nccl().reduce(send, recv, count, nccl_type(type), nccl_op(op), root, comm_, stream_),
        "ncclReduce");
  }
  void send_recv(const void* send, void* recv, size_t count, DataType type, int to,
                 int from) override {
    nccl().check(nccl().group_start(), "ncclGroupStart");
    nccl().check(nccl().send(send, count, nccl_type(type), to, comm_, stream_), "ncclSend");
    nccl().check(nccl().recv(recv, count, nccl_type(type), from, comm_, stream_), "ncclRecv");
    nccl().check(nccl().group_end(), "ncclGroupEnd");
  }
  // NCCL's avg on floating types multiplies each input by 1/n before summing; integers divide
  // the sum.
  bool avg_premultiplies(DataType type) const override {
    return type != DataType::kInt8 && type != DataType::kInt32;
  }

  void start_timer() override {
    libs_->cuda.check(libs_->cuda.event_record(start_, stream_), "cudaEventRecord");
  }
  double stop_timer() override {
    const Cuda& cuda = libs_->cuda;
    cuda.check(cuda.event_record(stop_, stream_), "cudaEventRecord");
    cuda.check(cuda.event_synchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda.check(cuda.event_elapsed_time(&ms, start_, stop_), "cudaEventElapsedTime");
    return static_cast<double>(ms) / 1e3;
  }
  void synchronize() override {
    libs_->cuda.check(libs_->cuda.stream_synchronize(stream_), "cudaStreamSynchronize");
  }

  void barrier() override { control_->barrier(); }
  std::vector<double> gather(std::span<const double> values, int root) override {
    return control_->gather(values, root);
  }
  std::vector<std::string> gather_strings(const std::string& value, int root) override {
    return control_->gather_strings(value, root);
  }
  std::vector<std::string> all_gather_strings(const std::string& value) override {
    return control_->all_gather_strings(value);
  }
  int broadcast_int(int value, int root) override { return control_->broadcast_int(value, root); }

 private:
  const Nccl& nccl() const { return libs_->nccl; }

  void release() {
    if (start_) libs_->cuda.event_destroy(start_);
    if (stop_) libs_->cuda.event_destroy(stop_);
    if (stream_) libs_->cuda.stream_destroy(stream_);
    if (comm_) nccl().comm_destroy(comm_);
  }

  std::shared_ptr<Libraries> libs_;
  std::unique_ptr<MpiCommunicator> control_;
  NcclComm comm_ = nullptr;
  CudaStream stream_ = nullptr;
  CudaEvent start_ = nullptr;
  CudaEvent stop_ = nullptr;
};


// NCCL 2.10 brought ncclAvg and ncclBfloat16, which plumb's options may ask for.
constexpr int kMinNcclVersion = 21000;

// Opens the libraries and selects this rank's GPU; throws plumb::Error on this rank only.
std::shared_ptr<Libraries> open_on_this_rank(int local_rank) {
  auto libs = std::make_shared<Libraries>();
  int version = 0;
  libs->nccl.check(libs->nccl.get_version(&version), "ncclGetVersion");
  if (version < kMinNcclVersion) {
    throw Error(fmt::format("--backend nccl: {} reports version code {}; plumb needs NCCL 2.10 or "
                            "newer (code {})",
                            libs->nccl.lib.name(), version, kMinNcclVersion));
  }
  int devices = 0;
  const CudaError e = libs->cuda.get_device_count(&devices);
  if (e != 0 || devices == 0) {
    throw Error(fmt::format("--backend nccl: no CUDA device is visible ({})",
                            e != 0 ? libs->cuda.get_error_string(e) : "0 devices"));
  }
  if (local_rank >= devices) {
    throw Error(fmt::format("--backend nccl: local rank {} but only {} GPU(s) visible on this "
                            "host; start at most {} ranks per host",
                            local_rank, devices, devices));
  }
  libs->cuda.check(libs->cuda.set_device(local_rank), "cudaSetDevice");
  return libs;
}

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(std::unique_ptr<MpiCommunicator> control) {
  const int local_rank = control->local_rank();  // collective: before any rank can fail
  std::shared_ptr<Libraries> libs;
  agree(*control, [&] { libs = open_on_this_rank(local_rank); });
  return std::make_unique<NcclCommunicator>(std::move(libs), std::move(control));
}


}  // namespace plumb::comm
