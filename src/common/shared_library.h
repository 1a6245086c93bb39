// A library opened with dlopen at run time (NCCL, the CUDA runtime, NVML, HCCL), so that the
// build never needs their headers and a machine without them gets a clear message, not a crash.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace plumb {

class SharedLibrary {
 public:
  // Opens the first of `names` that loads. Throws plumb::Error (exit 2) naming every name tried
  // and dlerror()'s reason for the first, with `hint` (what to install or set) appended.
  SharedLibrary(std::span<const std::string> names, std::string_view hint);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of `symbol`; throws plumb::Error when the library lacks it (too old a version).
  void* symbol(const char* name) const;

  // Typed form: auto f = lib.function<int (*)(int)>("f");
  template <class Fn>
  Fn function(const char* name) const {
    return reinterpret_cast<Fn>(symbol(name));
  }

  const std::string& name() const { return name_; }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace plumb
