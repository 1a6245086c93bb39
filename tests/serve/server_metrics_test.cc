// The server-side scrape: which series are kept, the scraper against the reference server's real
// /metrics, a failed scrape as a problem line, and the JSON.
#include "serve/server_metrics.h"

#include "common/error.h"
#include "serve/mock_http.h"
#include "serve/mock_server.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace plumb::serve {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/serve/metrics/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const ServerSeries* find(const ServerScrape& scrape, const std::string& name) {
  for (const auto& s : scrape.series)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(ServerMetrics, KeepsTheSeriesOfServingEnginesByTheirPrefixTable) {
  EXPECT_EQ(serving_engine_of("vllm:num_requests_running"), "vLLM");
  EXPECT_EQ(serving_engine_of("vllm:generation_tokens_created"), "");
  EXPECT_EQ(serving_engine_of("tgi_request_count"), "TGI");
  EXPECT_EQ(serving_engine_of("nv_inference_pending_request_count"), "Triton");
  EXPECT_EQ(serving_engine_of("nv_trt_llm_kv_cache_block_statistics"), "Triton");
  EXPECT_EQ(serving_engine_of("num_requests_waiting"), "MindIE");
  EXPECT_EQ(serving_engine_of("sglang:token_usage"), "SGLang");
  EXPECT_EQ(serving_engine_of("exposer_scrapes_total"), "");
  EXPECT_EQ(serving_engine_of("DCGM_FI_DEV_GPU_TEMP"), "");
  ServerScrape scrape;
  add_scrape_points(scrape, parse_prom_text(fixture("mindie_service_doc_example.prom"), "m"), -1);
  add_scrape_points(scrape, parse_prom_text(fixture("mindie_service_doc_example.prom"), "m"), 2);
  ASSERT_EQ(scrape.series.size(), 7u);
  EXPECT_EQ(scrape.series[0].name, "request_received_total");
  EXPECT_EQ(scrape.series[0].labels, (std::map<std::string, std::string>{{"model_name", "llama2-7b"}}));
  EXPECT_EQ(scrape.series[0].points,
            (std::vector<std::pair<double, double>>{{-1.0, 3188.0}, {2.0, 3188.0}}));
}

TEST(ServerMetrics, ScrapesTheReferenceServerBeforeDuringAndAfter) {
  MockConfig config;
  config.plan.tokens = 3;
  MockServer mock(config);
  mock.start();
  ServerScraper scraper(mock.base_url() + "/metrics", 0.05);
  scraper.before();
  scraper.start(MockServer::now_ns());
  for (int i = 0; i < 2; ++i)
    testing::http_exchange(mock.port(), "POST", "/generate_stream", R"({"inputs":"a"})");
  ServerScrape scrape = scraper.finish();
  EXPECT_EQ(scrape.problem, "");
  EXPECT_EQ(scrape.failed, 0);
  const ServerSeries* tokens = find(scrape, "vllm:generation_tokens_total");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(static_cast<int>(tokens->points.size()), scrape.scrapes);
  EXPECT_LT(tokens->points.front().first, 0);
  EXPECT_EQ(tokens->points.front().second, 0);
  EXPECT_GT(tokens->points.back().first, 0);
  EXPECT_EQ(tokens->points.back().second, 6);
  EXPECT_EQ(find(scrape, "vllm:generation_tokens_created"), nullptr);
}

TEST(ServerMetrics, AFailedScrapeIsAProblemLineNotAFailedRun) {
  MockServer mock(MockConfig{});
  mock.start();
  ServerScraper scraper(mock.base_url() + "/nowhere", 10);
  scraper.before();
  scraper.start(MockServer::now_ns());
  ServerScrape scrape = scraper.finish();
  EXPECT_EQ(scrape.problem, "GET " + mock.base_url() + "/nowhere: HTTP 404 (2 of 2 scrapes failed)");
  EXPECT_TRUE(scrape.series.empty());

  ServerScraper garbled("http://h/metrics", 10, [](const std::string&, double) {
    return std::string("<html>busy</html>\n");
  });
  garbled.start(0);
  EXPECT_EQ(garbled.finish().problem,
            "http://h/metrics:1: expected a metric name (got '<html>busy</html>') (1 of 1 scrapes "
            "failed)");
}

TEST(ServerMetrics, JsonKeepsEachSeriesWithItsPointsAndNanAsText) {
  ServerScrape scrape;
  scrape.url = "http://h:8000/metrics";
  scrape.scrapes = 2;
  scrape.series.push_back({"vllm:num_requests_running", {{"engine", "0"}}, {{-0.5, 0}, {1.5, NAN}}});
  EXPECT_EQ(server_scrape_json(scrape).dump(),
            R"({"failed":0,"scrapes":2,"series":[{"labels":{"engine":"0"},"name":)"
            R"("vllm:num_requests_running","points":[[-0.5,0.0],[1.5,"NaN"]]}],)"
            R"("url":"http://h:8000/metrics"})");
}

}  // namespace
}  // namespace plumb::serve
