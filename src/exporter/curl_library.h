// libcurl, opened with dlopen the first time an alert is posted. Linked, libcurl and the TLS,
// Kerberos and LDAP libraries it pulls in made every plumb command start 6 ms slower (12.3 ms
// for `plumb --version` against 6 ms; gnutls initialises itself as it loads), which `plumb mem
// analyze` of a 94 MB snapshot paid out of a budget of 0.17 s (issue 14). The headers still come
// from libcurl4-openssl-dev; only the library is opened at run time.
#pragma once

#include <curl/curl.h>

namespace plumb::exporter {

// The functions chat_sender.cc and plumb serve's engine call, resolved from libcurl.so.4 (or the
// gnutls flavour's libcurl-gnutls.so.4).
struct CurlApi {
  CURLcode (*global_init)(long flags) = nullptr;
  void (*global_cleanup)() = nullptr;
  CURL* (*easy_init)() = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  // The multi interface plumb serve's engine drives on epoll (serve/client.cc).
  CURLM* (*multi_init)() = nullptr;
  CURLMcode (*multi_cleanup)(CURLM*) = nullptr;
  CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...) = nullptr;
  CURLMcode (*multi_socket_action)(CURLM*, curl_socket_t, int, int*) = nullptr;
  CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_assign)(CURLM*, curl_socket_t, void*) = nullptr;
  const char* (*multi_strerror)(CURLMcode) = nullptr;
  curl_version_info_data* (*version_info)(CURLversion) = nullptr;
};

// Opened once (thread-safe); throws plumb::Error (exit 2) naming the library and what to install
// where it cannot be loaded.
const CurlApi& curl_api();

}  // namespace plumb::exporter
