#include "common/shared_library.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "common/error.h"
#include "common/strings.h"

namespace plumb {

SharedLibrary::SharedLibrary(std::span<const std::string> names, std::string_view hint) {
  std::string first_reason;
  for (const std::string& n : names) {
    handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      name_ = n;
      return;
    }
    if (first_reason.empty()) {
      const char* reason = dlerror();
      first_reason = reason ? reason : "unknown reason";
    }
  }
  throw Error(fmt::format("cannot load {} ({}); {}", join(names, " or "), first_reason, hint));
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::symbol(const char* symbol_name) const {
  dlerror();
  void* address = dlsym(handle_, symbol_name);
  if (!address) {
    throw Error(fmt::format("{} has no symbol {}: the library is too old or not the expected one",
                            name_, symbol_name));
  }
  return address;
}

}  // namespace plumb
