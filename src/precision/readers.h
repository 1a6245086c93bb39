// The tensor file formats, one file each behind this table (readers.cc): .npy (npy_reader.cc),
// .pt written by torch.save (pt_reader.cc: the zip container, data.pkl through src/mem's pickle
// reader with a restricted set of globals), .safetensors (safetensors_reader.cc) and raw .bin
// (raw_reader.cc, with --dtype and --shape). Every error is a plumb::Error (exit 2) naming the
// file and, where there is one, the byte offset or the field: "x.npy: header at byte 10: ...".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mem/input.h"
#include "precision/tensor.h"

namespace plumb::precision {

struct ReadOptions {
  std::optional<DType> raw_dtype;             // raw .bin: --dtype (required for raw)
  std::optional<std::vector<int64_t>> raw_shape;  // raw .bin: --shape (default: 1-D of the file's size)
};

struct Format {
  std::string_view name;        // "npy", "npz" (refused, saying how to extract it), "pt", "safetensors", "raw"
  std::string_view extensions;  // ".npy", ".pt .pth", ".safetensors", ".bin .raw"
  // True when the first bytes say the file is this format (raw: never; chosen by extension).
  bool (*sniff)(std::string_view head);
  // Every tensor in the file, in the file's order. Names: the path for a single tensor; "path:key"
  // for each key of a dict (.pt state dicts, .safetensors).
  std::vector<Tensor> (*read)(const mem::InputBytes& input, const ReadOptions& options);
};

const std::vector<Format>& formats();

// The format by the file's first bytes, else by its extension; an Error naming the path when
// neither tells ("x.dat: not a tensor file this reader knows (.npy, .pt, .safetensors; raw data
// needs --dtype)").
const Format& format_of(const mem::InputBytes& input, const ReadOptions& options);

// Loads the file and reads every tensor in it.
std::vector<Tensor> read_tensors(const std::string& path, const ReadOptions& options = {});

// Each format's reader, for tests and fuzzers (bytes in memory through mem::input_from_string).
std::vector<Tensor> read_npy(const mem::InputBytes& input, const ReadOptions& options);
std::vector<Tensor> read_pt(const mem::InputBytes& input, const ReadOptions& options);
std::vector<Tensor> read_safetensors(const mem::InputBytes& input, const ReadOptions& options);
std::vector<Tensor> read_raw(const mem::InputBytes& input, const ReadOptions& options);

}  // namespace plumb::precision
