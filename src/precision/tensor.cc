#include "precision/tensor.h"

#include <fmt/format.h>

#include "common/error.h"

namespace plumb::precision {

uint64_t Tensor::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::optional<uint64_t> checked_bytes(const std::vector<int64_t>& shape, DType dtype) {
  uint64_t bytes = dtype_info(dtype).bytes;
  bool zero = false;
  bool overflow = false;
  for (int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (dim == 0) zero = true;
    if (dim != 0 && bytes > UINT64_MAX / static_cast<uint64_t>(dim)) overflow = true;
    if (!overflow) bytes *= static_cast<uint64_t>(dim);
  }
  if (zero) return 0;  // [0, 2^62, 2^62] holds nothing, whatever the product of the others
  if (overflow) return std::nullopt;
  return bytes;
}

Tensor owned_tensor(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<std::byte> bytes) {
  const std::optional<uint64_t> needed = checked_bytes(shape, dtype);
  if (!needed || *needed != bytes.size()) {
    throw Error(fmt::format("{}: {} bytes for shape {} of {}, which needs {}", name, bytes.size(),
                            shape_text(shape), dtype_name(dtype),
                            needed ? fmt::format("{}", *needed) : std::string("more than 2^64")));
  }
  auto buffer = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  Tensor tensor;
  tensor.name = std::move(name);
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  tensor.data = buffer->data();
  tensor.owner = std::move(buffer);
  return tensor;
}

namespace {

// The alignment a value of the type needs: a complex number is two floats.
size_t alignment_of(DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  return info.kind == DKind::kComplex ? info.bytes / 2u : info.bytes;
}

}  // namespace

Tensor view_tensor(std::string name, DType dtype, std::vector<int64_t> shape, const std::byte* data,
                   std::shared_ptr<const void> owner) {
  Tensor tensor;
  tensor.name = std::move(name);
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  if (reinterpret_cast<uintptr_t>(data) % alignment_of(dtype) != 0) {
    std::vector<std::byte> copy(data, data + tensor.bytes());
    return owned_tensor(std::move(tensor.name), dtype, std::move(tensor.shape), std::move(copy));
  }
  tensor.data = data;
  tensor.owner = std::move(owner);
  return tensor;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace plumb::precision
