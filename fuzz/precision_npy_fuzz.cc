// libFuzzer target: any bytes as a .npy file. read_npy must return one tensor or throw
// plumb::Error -- never crash, hang or read outside the bytes -- and the tensor it returns must be
// whole: every byte of elements() × dtype readable (ASan checks), aligned for its type, and, when
// it points into the input rather than a copy, inside it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "precision/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace plumb::precision;
  const plumb::mem::InputBytes input =
      plumb::mem::input_from_string(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  try {
    const std::vector<Tensor> tensors = read_npy(input, {});
    if (tensors.size() != 1) std::abort();
    const Tensor& t = tensors[0];
    const DTypeInfo& info = dtype_info(t.dtype);
    const size_t unit = info.kind == DKind::kComplex ? info.bytes / 2u : info.bytes;
    if (t.bytes() > 0 && reinterpret_cast<uintptr_t>(t.data) % unit != 0) std::abort();
    const auto* begin = reinterpret_cast<const std::byte*>(input.bytes().data());
    if (t.owner == input.owner() && (t.data < begin || t.data + t.bytes() > begin + size)) std::abort();
    unsigned sum = 0;
    for (size_t i = 0; i < t.bytes(); ++i) sum += static_cast<unsigned>(t.data[i]);
    if (sum == 0xffffffffu) std::abort();  // keeps the reads
  } catch (const plumb::Error&) {
  }
  return 0;
}
