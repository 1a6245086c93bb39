// One tensor as read from a file: its element type, its shape and its bytes, in this machine's byte
// order and C (row-major) order. Readers map files and point into the mapping where the bytes are
// already so (a native-order C-contiguous .npy, .safetensors, raw .bin); otherwise they copy once
// (Fortran order, the other byte order, a strided .pt view) into a buffer the tensor owns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "precision/dtype.h"

namespace plumb::precision {

struct Tensor {
  std::string name;            // "path" for a one-tensor file, "path:key" for a key in a file
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  // elements() × dtype bytes, native byte order, C order, aligned for the element type (readers
  // copy when the file's bytes are not). May be null when there are no elements.
  const std::byte* data = nullptr;
  std::shared_ptr<const void> owner;  // keeps `data` alive: the mapping or the buffer

  uint64_t elements() const;  // the product of shape (1 for a scalar, 0 when a dimension is 0)
  size_t bytes() const { return static_cast<size_t>(elements()) * dtype_info(dtype).bytes; }
};

// A tensor that owns `bytes` (already native and C order); throws if the size does not match.
Tensor owned_tensor(std::string name, DType dtype, std::vector<int64_t> shape, std::vector<std::byte> bytes);

// A tensor that points at `data` (kept alive by `owner`: a mapping) when it is aligned for the
// element type, else one that owns a copy: readers' zero-copy path. `data` must hold bytes() bytes.
Tensor view_tensor(std::string name, DType dtype, std::vector<int64_t> shape, const std::byte* data,
                   std::shared_ptr<const void> owner);

// shape × dtype bytes; nullopt when a dimension is negative or the product passes 2^64 (a shape
// with a 0 dimension holds 0 bytes, whatever the others). Readers check a file's shape with it.
std::optional<uint64_t> checked_bytes(const std::vector<int64_t>& shape, DType dtype);

// "[2, 3]", "[]" for a scalar: how shapes appear in messages, tables and the JSON.
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace plumb::precision
