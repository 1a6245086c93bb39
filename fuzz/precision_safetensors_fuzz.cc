// libFuzzer target: any bytes as a .safetensors file. read_safetensors must return the tensors or
// throw plumb::Error -- never crash, hang or read outside the bytes -- and what it returns must
// follow the format's promise: every tensor inside the byte buffer, in offset order, no two
// overlapping, each aligned for its type (copied when the file's bytes were not), each readable.
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
      plumb::mem::input_from_string(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
  const auto* begin = reinterpret_cast<const std::byte*>(input.bytes().data());
  try {
    const std::vector<Tensor> tensors = read_safetensors(input, {});
    const std::byte* previous_end = nullptr;
    unsigned sum = 0;
    for (const Tensor& t : tensors) {
      if (t.name.rfind("fuzz.safetensors:", 0) != 0) std::abort();
      const DTypeInfo& info = dtype_info(t.dtype);
      const size_t unit = info.kind == DKind::kComplex ? info.bytes / 2u : info.bytes;
      if (t.bytes() > 0 && reinterpret_cast<uintptr_t>(t.data) % unit != 0) std::abort();
      if (t.owner == input.owner()) {
        if (t.data < begin || t.data + t.bytes() > begin + size) std::abort();
        if (previous_end != nullptr && t.data < previous_end) std::abort();
        previous_end = t.data + t.bytes();
      }
      for (size_t i = 0; i < t.bytes(); ++i) sum += static_cast<unsigned>(t.data[i]);
    }
    if (sum == 0xffffffffu) std::abort();  // keeps the reads
  } catch (const plumb::Error&) {
  }
  return 0;
}
