// Raw tensor bytes (.bin, .raw: what tensor.numpy().tofile() or a C program's fwrite writes): no
// header, so the element type comes from --dtype and the shape from --shape (else one dimension
// of the file's size). This machine's byte order, C order; mapped, not copied.
#include <fmt/format.h>

#include "common/error.h"
#include "precision/readers.h"

namespace plumb::precision {

std::vector<Tensor> read_raw(const mem::InputBytes& input, const ReadOptions& options) {
  const std::string& path = input.name();
  if (!options.raw_dtype) {
    throw Error(fmt::format("{}: raw data needs --dtype (and --shape, else one dimension of the file's size)", path));
  }
  const DType dtype = *options.raw_dtype;
  const DTypeInfo& info = dtype_info(dtype);
  const size_t size = input.bytes().size();
  std::vector<int64_t> shape;
  if (options.raw_shape) {
    shape = *options.raw_shape;
    for (int64_t dim : shape) {
      if (dim < 0) throw Error(fmt::format("{}: --shape {} has a negative size", path, shape_text(shape)));
    }
    const std::optional<uint64_t> needed = checked_bytes(shape, dtype);
    if (!needed || *needed != size) {
      throw Error(fmt::format("{}: {} bytes, but --shape {} of {} needs {}", path, size, shape_text(shape), info.name,
                              needed ? std::to_string(*needed) : "more than 2^64"));
    }
  } else {
    if (size % info.bytes != 0) {
      throw Error(fmt::format("{}: {} bytes is not a whole number of {} elements ({} bytes each)", path, size,
                              info.name, info.bytes));
    }
    shape = {static_cast<int64_t>(size / info.bytes)};
  }
  const auto* data = reinterpret_cast<const std::byte*>(input.bytes().data());
  return {view_tensor(path, dtype, std::move(shape), data, input.owner())};
}

}  // namespace plumb::precision
