#include "serve/server_metrics.h"

#include "common/error.h"
#include "exporter/curl_library.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>

namespace plumb::serve {
namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  constexpr std::size_t kMaxBody = 64 * 1024 * 1024;  // a /metrics page beyond this is refused
  if (body->size() + size * count > kMaxBody) return 0;
  body->append(data, size * count);
  return size * count;
}

// A JSON number, or a string for what JSON cannot hold ("NaN", "+Inf", "-Inf").
nlohmann::json number_json(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return value;
}

}  // namespace

const std::vector<ServingSeriesPrefix>& serving_series_prefixes() {
  static const std::vector<ServingSeriesPrefix> table = {
      {"vLLM", "vllm:"},                 // vllm/v1/metrics/loggers.py
      {"SGLang", "sglang:"},             // sglang docs, "Production Metrics"
      {"TGI", "tgi_"},                   // text-generation-inference router/src/server.rs
      {"Triton", "nv_inference_"},       // Triton docs, user_guide/metrics.md
      {"Triton", "nv_gpu_"},
      {"Triton", "nv_cache_"},
      {"Triton", "nv_trt_llm_"},         // the TensorRT-LLM backend's custom metrics
      // MindIE Service's "Prometheus-format metrics" API: vLLM's names without a prefix.
      {"MindIE", "request_received_total"},
      {"MindIE", "request_success_total"},
      {"MindIE", "request_failed_total"},
      {"MindIE", "num_preemptions_total"},
      {"MindIE", "num_requests_"},
      {"MindIE", "prompt_tokens_total"},
      {"MindIE", "generation_tokens_total"},
      {"MindIE", "time_to_first_token_seconds"},
      {"MindIE", "time_per_output_token_seconds"},
      {"MindIE", "e2e_request_latency_seconds"},
      {"MindIE", "request_prompt_tokens"},
      {"MindIE", "request_generation_tokens"},
      {"MindIE", "npu_cache_usage_perc"},
      {"MindIE", "cpu_cache_usage_perc"},
  };
  return table;
}

std::string_view serving_engine_of(std::string_view name) {
  if (name.ends_with("_created")) return "";
  for (const auto& entry : serving_series_prefixes())
    if (name.starts_with(entry.prefix)) return entry.engine;
  return "";
}

void add_scrape_points(ServerScrape& scrape, const PromText& text, double t_s) {
  for (const auto& sample : text.samples) {
    if (serving_engine_of(sample.name).empty()) continue;
    std::map<std::string, std::string> labels(sample.labels.begin(), sample.labels.end());
    ServerSeries* series = nullptr;
    for (auto& existing : scrape.series)
      if (existing.name == sample.name && existing.labels == labels) series = &existing;
    if (!series) {
      scrape.series.push_back({sample.name, std::move(labels), {}});
      series = &scrape.series.back();
    }
    series->points.emplace_back(t_s, sample.value);
  }
}

std::string http_get_text(const std::string& url, double timeout_s) {
  const exporter::CurlApi& curl = exporter::curl_api();
  std::unique_ptr<CURL, void (*)(CURL*)> h(curl.easy_init(), curl.easy_cleanup);
  std::string body;
  char error[CURL_ERROR_SIZE] = {};
  curl.easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl.easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl.easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl.easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl.easy_setopt(h.get(), CURLOPT_WRITEDATA, &body);
  curl.easy_setopt(h.get(), CURLOPT_ERRORBUFFER, error);
  curl.easy_setopt(h.get(), CURLOPT_ACCEPT_ENCODING, "");
  CURLcode rc = curl.easy_perform(h.get());
  if (rc != CURLE_OK)
    throw Error("GET " + url + ": " + (error[0] ? error : curl.easy_strerror(rc)));
  long status = 0;
  curl.easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) throw Error("GET " + url + ": HTTP " + std::to_string(status));
  return body;
}

nlohmann::json server_scrape_json(const ServerScrape& scrape) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& s : scrape.series) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& [t, v] : s.points) points.push_back({t, number_json(v)});
    series.push_back({{"name", s.name}, {"labels", s.labels}, {"points", points}});
  }
  nlohmann::json out = {{"url", scrape.url}, {"scrapes", scrape.scrapes},
                        {"failed", scrape.failed}, {"series", series}};
  if (!scrape.problem.empty()) out["problem"] = scrape.problem;
  return out;
}

// ---- the scraper ---------------------------------------------------------------------------

ServerScraper::ServerScraper(std::string url, double interval_s, MetricsGetter get)
    : url_(std::move(url)), interval_s_(interval_s), get_(std::move(get)) {
  scrape_.url = url_;
}

ServerScraper::~ServerScraper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ServerScraper::scrape_once() {
  Nanos at = monotonic_ns();
  std::string problem;
  PromText text;
  try {
    // A scrape may take up to its interval (at least a second) before it counts as failed.
    text = parse_prom_text(get_(url_, std::max(1.0, interval_s_)), url_);
  } catch (const Error& e) {
    problem = e.what();
  }
  std::lock_guard lock(mutex_);
  ++scrape_.scrapes;
  if (!problem.empty()) {
    ++scrape_.failed;
    if (scrape_.problem.empty()) scrape_.problem = problem;
    return;
  }
  add_scrape_points(scrape_, text, static_cast<double>(at));
}

void ServerScraper::before() { scrape_once(); }

void ServerScraper::start(Nanos origin_ns) {
  origin_ns_ = origin_ns;
  auto period = std::chrono::duration<double>(interval_s_);
  thread_ = std::thread([this, period] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      scrape_once();
      lock.lock();
    }
  });
}

ServerScrape ServerScraper::finish(Nanos origin_ns) {
  if (origin_ns != kNoTime) origin_ns_ = origin_ns;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  scrape_once();
  ServerScrape out = scrape_;
  for (auto& series : out.series)
    for (auto& point : series.points) point.first = (point.first - static_cast<double>(origin_ns_)) / 1e9;
  if (out.failed > 0)
    out.problem += " (" + std::to_string(out.failed) + " of " + std::to_string(out.scrapes) +
                   " scrapes failed)";
  return out;
}

}  // namespace plumb::serve
