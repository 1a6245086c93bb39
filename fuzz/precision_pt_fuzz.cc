// libFuzzer target: any bytes as a .pt file (the zip container, data.pkl through the restricted
// pickle reading, the storages and views). Reading must either give tensors or throw plumb::Error
// -- never crash, hang, read out of bounds or throw anything else -- and every tensor it gives
// must hold its bytes (each is read through once).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "precision/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto tensors = plumb::precision::read_pt(plumb::mem::input_from_string(std::move(bytes), "fuzz.pt"), {});
    uint64_t sum = 0;
    for (const auto& t : tensors) {
      const size_t n = t.bytes();
      for (size_t i = 0; i < n; ++i) sum += static_cast<uint8_t>(t.data[i]);
    }
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
