// PyTorch and torch_npu allocator snapshots (torch.cuda.memory._snapshot(), written by
// _dump_snapshot() as a pickle, or the same dict as JSON) into a Trace of one device
// (docs/mem-format.md gives every key and its source).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>

#include "mem/input.h"
#include "mem/trace.h"

namespace plumb::mem {

// `name` goes into every message; `device` picks device_traces[device] and that device's segments.
Trace snapshot_from_json(const nlohmann::json& doc, const std::string& name, int device);
// The JSON form parsed whole, then converted (nullopt: not JSON; an Error: nested deeper than
// kMaxJsonDepth): the reference for read_trace's streaming JSON reader, which converts
// device_traces[device]'s events as they are parsed.
std::optional<Trace> snapshot_from_json_tree(const InputBytes& input, int device);

// A pickle as _dump_snapshot() writes it (protocols 2–5 of plain data; src/mem/pickle.h). The
// events stream: they are converted as the reader passes them and their values dropped, so memory
// follows the trace, not the file; a layout the streaming reader does not take is read whole
// (snapshot_from_pickle_tree), with the same result.
Trace snapshot_from_pickle_bytes(const std::string& bytes, const std::string& name, int device);
// From this input size on the streaming reader takes helper threads: one faults in the events'
// pages ahead of it (common/prefault.h), one validates them as they come (StreamValidator); below
// it they cost more than they save. Tests pass 0 to use them on small files.
inline constexpr size_t kSnapshotHelpersFrom = size_t{16} << 20;
Trace snapshot_from_pickle(const InputBytes& input, int device, size_t helpers_from = kSnapshotHelpersFrom);
Trace snapshot_from_pickle_file(const std::string& path, int device);
// The whole document first, then the conversion: the reference the streaming reader must equal.
Trace snapshot_from_pickle_tree(const InputBytes& input, int device);

// By content: a pickle (first byte 0x80), a JSON snapshot (an object with "device_traces" or
// "segments"), or plumb.mem-events/1 lines. Errors name the file. The bytes are read once
// (mem/input.h): a FIFO or a pipe works as well as a file.
Trace read_trace(const InputBytes& input, int device);
Trace read_trace(const std::string& path, int device);

}  // namespace plumb::mem
