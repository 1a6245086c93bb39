#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "comm/mpi_backend.h"

namespace plumb::comm {
namespace {

constexpr size_t kPage = 4096;

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(size_t bytes) : size_(bytes) {
    const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    data_ = std::aligned_alloc(kPage, rounded == 0 ? kPage : rounded);
    if (!data_) throw std::bad_alloc();
  }
  ~HostBuffer() override { std::free(data_); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() override { return data_; }
  size_t size() const override { return size_; }
  void upload(const void* host, size_t bytes) override {
    if (bytes) std::memcpy(data_, host, bytes);
  }
  void download(void* host, size_t bytes) const override {
    if (bytes) std::memcpy(host, data_, bytes);
  }
  void fill(unsigned char value, size_t bytes) override {
    if (bytes) std::memset(data_, value, bytes);
  }

 private:
  void* data_;
  size_t size_;
};

template <class T>
void divide_as(void* data, size_t count, int divisor) {
  T* values = static_cast<T*>(data);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<T>(values[i] / divisor);
}

}  // namespace

std::unique_ptr<Buffer> allocate_host_buffer(size_t bytes) {
  return std::make_unique<HostBuffer>(bytes);
}

void divide_elements(void* data, size_t count, DataType type, int divisor) {
  switch (type) {
    case DataType::kInt8: return divide_as<int8_t>(data, count, divisor);
    case DataType::kInt32: return divide_as<int32_t>(data, count, divisor);
    case DataType::kFloat32: return divide_as<float>(data, count, divisor);
    case DataType::kFloat64: return divide_as<double>(data, count, divisor);
    case DataType::kFloat16:
    case DataType::kBFloat16:
      for (size_t i = 0; i < count; ++i) store(type, data, i, load(type, data, i) / divisor);
      return;
  }
}

}  // namespace plumb::comm
