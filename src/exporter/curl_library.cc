#include "exporter/curl_library.h"

#include <array>
#include <string>

#include "common/shared_library.h"

namespace plumb::exporter {
namespace {

struct Loaded {
  SharedLibrary library;
  CurlApi api;

  Loaded()
      : library(names(),
                "plumb alert-relay and plumb serve speak HTTP with libcurl: apt install libcurl4") {
    api.global_init = library.function<decltype(api.global_init)>("curl_global_init");
    api.global_cleanup = library.function<decltype(api.global_cleanup)>("curl_global_cleanup");
    api.easy_init = library.function<decltype(api.easy_init)>("curl_easy_init");
    api.easy_cleanup = library.function<decltype(api.easy_cleanup)>("curl_easy_cleanup");
    api.easy_setopt = library.function<decltype(api.easy_setopt)>("curl_easy_setopt");
    api.easy_perform = library.function<decltype(api.easy_perform)>("curl_easy_perform");
    api.easy_getinfo = library.function<decltype(api.easy_getinfo)>("curl_easy_getinfo");
    api.easy_strerror = library.function<decltype(api.easy_strerror)>("curl_easy_strerror");
    api.slist_append = library.function<decltype(api.slist_append)>("curl_slist_append");
    api.slist_free_all = library.function<decltype(api.slist_free_all)>("curl_slist_free_all");
    load_multi();
  }

  void load_multi() {
    api.multi_init = library.function<decltype(api.multi_init)>("curl_multi_init");
    api.multi_cleanup = library.function<decltype(api.multi_cleanup)>("curl_multi_cleanup");
    api.multi_add_handle =
        library.function<decltype(api.multi_add_handle)>("curl_multi_add_handle");
    api.multi_remove_handle =
        library.function<decltype(api.multi_remove_handle)>("curl_multi_remove_handle");
    api.multi_setopt = library.function<decltype(api.multi_setopt)>("curl_multi_setopt");
    api.multi_socket_action =
        library.function<decltype(api.multi_socket_action)>("curl_multi_socket_action");
    api.multi_info_read = library.function<decltype(api.multi_info_read)>("curl_multi_info_read");
    api.multi_assign = library.function<decltype(api.multi_assign)>("curl_multi_assign");
    api.multi_strerror = library.function<decltype(api.multi_strerror)>("curl_multi_strerror");
    api.version_info = library.function<decltype(api.version_info)>("curl_version_info");
  }

  static std::array<std::string, 2> names() { return {"libcurl.so.4", "libcurl-gnutls.so.4"}; }
};

}  // namespace

const CurlApi& curl_api() {
  static const Loaded loaded;  // a failed load throws, and the next call tries again
  return loaded.api;
}

}  // namespace plumb::exporter
