#include "sysinfo/system_info.h"

#include <gnu/libc-version.h>
#include <mpi.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/environment.h"
#include "common/error.h"
#include "common/json.h"
#include "common/shared_library.h"
#include "common/subprocess.h"
#include "sysinfo/version_text.h"

namespace plumb::sysinfo {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 10> kPrefixes = {
    "NCCL_", "HCCL_", "OMPI_", "UCX_", "CUDA_", "ASCEND_", "PYTORCH_", "TORCH_", "GLOO_", "MASTER_"};

using Probe = std::function<void(const ProbeContext&, std::vector<Item>&)>;

fs::path under_root(const ProbeContext& c, std::string_view path) {
  return fs::path(c.root) / fs::path(path).relative_path();
}

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One item from one file through one parser.
Probe from_file(std::string name, std::string path,
                std::function<std::optional<std::string>(std::string_view)> parse) {
  return [=](const ProbeContext& c, std::vector<Item>& out) {
    const auto text = read_text(under_root(c, path));
    out.push_back({name, text ? parse(*text) : std::nullopt, path});
  };
}

// The first of `patterns` (each "dir/*/file" or a plain path) that exists, parsed by `key`.
Probe from_first_file(std::string name, std::vector<std::string> paths, std::string key) {
  return [=](const ProbeContext& c, std::vector<Item>& out) {
    for (const std::string& path : paths) {
      const fs::path full = under_root(c, path);
      std::vector<fs::path> candidates;
      const std::string file = full.filename();
      const fs::path parent = full.parent_path();
      if (parent.filename() == "*") {  // one level of wildcard: <dir>/*/<file>
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(parent.parent_path(), ec)) {
          candidates.push_back(entry.path() / file);
        }
        std::sort(candidates.begin(), candidates.end());
      } else {
        candidates.push_back(full);
      }
      for (const fs::path& candidate : candidates) {
        if (auto text = read_text(candidate)) {
          const std::string shown = "/" + fs::relative(candidate, c.root).string();
          out.push_back({name, key_value(*text, key), shown});
          return;
        }
      }
    }
    out.push_back({name, std::nullopt, "not installed"});
  };
}

void probe_cpu(const ProbeContext& c, std::vector<Item>& out) {
  const auto text = read_text(under_root(c, "/proc/cpuinfo"));
  out.push_back({"cpu_model", text ? cpu_model(*text) : std::nullopt, "/proc/cpuinfo"});
  const int count = text ? cpu_count(*text) : 0;
  out.push_back({"cpu_count", count > 0 ? std::optional(std::to_string(count)) : std::nullopt,
                 "/proc/cpuinfo"});
}

void probe_build(const ProbeContext&, std::vector<Item>& out) {
#if defined(__clang__)
  const std::string compiler = fmt::format("Clang {}", __clang_version__);
#elif defined(__GNUC__)
  const std::string compiler = fmt::format("GCC {}", __VERSION__);
#else
  const std::string compiler = "unknown";
#endif
  out.push_back({"compiler", compiler, "plumb's build"});
  out.push_back({"glibc", std::string(gnu_get_libc_version()), "gnu_get_libc_version()"});
}

void probe_mpi(const ProbeContext&, std::vector<Item>& out) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);  // allowed before MPI_Init (MPI 3.0, 8.1.1)
  std::string version(text, static_cast<size_t>(std::max(0, length)));
  version = version.substr(0, version.find_first_of("\n,"));
  out.push_back({"mpi", version.empty() ? std::nullopt : std::optional(version),
                 "MPI_Get_library_version()"});
}

// A version through a library function taking int*, formatted by `format`.
Probe from_library(std::string name, std::vector<std::string> ProbeContext::*names,
                   const char* symbol, std::string (*format)(int)) {
  return [=](const ProbeContext& c, std::vector<Item>& out) {
    try {
      SharedLibrary lib(c.*names, "");
      int code = 0;
      const auto get = lib.function<int (*)(int*)>(symbol);
      if (get(&code) != 0 || code <= 0) {
        out.push_back({name, std::nullopt, fmt::format("{}: {} failed", lib.name(), symbol)});
        return;
      }
      out.push_back({name, format(code), lib.name()});
    } catch (const Error&) {
      out.push_back({name, std::nullopt, "not installed"});
    }
  };
}

constexpr const char* kPythonScript = R"(import importlib.util, json, platform
found = {"python": platform.python_version()}
for name in ("torch", "torch_npu"):
    if importlib.util.find_spec(name) is None:
        continue
    try:
        module = __import__(name)
        found[name] = getattr(module, "__version__", "unknown")
        if name == "torch":
            found["torch_cuda"] = module.version.cuda
    except Exception as e:
        found[name] = "import failed: " + type(e).__name__
print(json.dumps(found))
)";

void probe_python(const ProbeContext& c, std::vector<Item>& out) {
  const std::array<std::string, 4> names = {"python", "torch", "torch_cuda", "torch_npu"};
  const auto result = run_with_timeout({c.python, "-c", kPythonScript}, c.python_timeout_s);
  std::string why;
  nlohmann::json found;
  if (!result) {
    why = fmt::format("{}: no answer within {:g} s", c.python, c.python_timeout_s);
  } else if (result->exit_code != 0) {
    why = fmt::format("{}: exit code {}", c.python, result->exit_code);
  } else {
    std::string problem;
    found = parse_json_or_discarded(result->output, problem);
    if (found.is_discarded()) {
      why = fmt::format("{}: unreadable answer: {}", c.python, problem);
    } else if (!found.is_object()) {
      why = fmt::format("{}: unreadable answer: expected a JSON object", c.python);
    }
  }
  for (const std::string& name : names) {
    const bool has = why.empty() && found.contains(name) && found[name].is_string();
    out.push_back({name, has ? std::optional(found[name].get<std::string>()) : std::nullopt,
                   why.empty() ? c.python : why});
  }
}

const std::vector<Probe>& probes() {
  static const std::vector<Probe> kProbes = {
      from_file("os", "/etc/os-release", os_pretty_name),
      from_file("kernel", "/proc/sys/kernel/osrelease",
                [](std::string_view t) -> std::optional<std::string> {
                  const std::string v(t.substr(0, t.find('\n')));
                  return v.empty() ? std::nullopt : std::optional(v);
                }),
      probe_cpu,
      probe_build,
      probe_mpi,
      from_file("nvidia_driver", "/proc/driver/nvidia/version", nvidia_driver_version),
      from_library("cuda_runtime", &ProbeContext::cudart_names, "cudaRuntimeGetVersion",
                   cuda_version),
      from_library("nccl", &ProbeContext::nccl_names, "ncclGetVersion", nccl_version),
      from_first_file("ascend_driver", {"/usr/local/Ascend/driver/version.info"}, "Version"),
      from_first_file("cann",
                      {"/usr/local/Ascend/ascend-toolkit/latest/*/ascend_toolkit_install.info",
                       "/usr/local/Ascend/cann/*/ascend_toolkit_install.info"},
                      "version"),
      probe_python,
  };
  return kProbes;
}

}  // namespace

const Item* EnvRecord::find(std::string_view name) const {
  for (const Item& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

std::span<const std::string_view> env_prefixes() { return kPrefixes; }

EnvRecord collect_env(const ProbeContext& context) {
  EnvRecord record;
  record.created = utc_timestamp();
  record.host = host_name();
  for (const Probe& probe : probes()) probe(context, record.items);
  record.env = context.environment.empty() ? capture_environment(kPrefixes)
                                           : filter_environment(context.environment, kPrefixes);
  return record;
}

}  // namespace plumb::sysinfo
