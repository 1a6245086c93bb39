// The Prometheus text format reader against engines' real /metrics and the format's corners.
#include "serve/prom_text.h"

#include "common/error.h"

#include <gtest/gtest.h>

#include <cmath>
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

std::string error_of(std::string_view text) {
  try {
    parse_prom_text(text, "m.prom");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PromText, ReadsVllmsScrapeWithItsHistogramAndCreatedSeries) {
  auto text = parse_prom_text(fixture("vllm_v1_scrape_excerpt.prom"), "vllm");
  ASSERT_EQ(text.samples.size(), 11u);
  const auto& inf = text.samples[7];
  EXPECT_EQ(inf.name, "vllm:time_to_first_token_seconds_bucket");
  EXPECT_EQ(inf.labels, (std::vector<std::pair<std::string, std::string>>{
                            {"engine", "0"}, {"le", "+Inf"}, {"model_name", "smollm2-360m"}}));
  EXPECT_EQ(inf.value, 178.0);
  EXPECT_DOUBLE_EQ(text.samples[9].value, 50.285691261291504);
  EXPECT_DOUBLE_EQ(text.samples[1].value, 1.78985652202672e+09);
}

TEST(PromText, ReadsMindIesNanAndItsTypes) {
  auto text = parse_prom_text(fixture("mindie_service_doc_example.prom"), "mindie");
  EXPECT_EQ(text.types.at("exposer_request_latencies"), "summary");
  EXPECT_EQ(text.types.at("num_requests_running"), "gauge");
  EXPECT_EQ(text.help.at("num_requests_swapped"), "Number of requests swapped to CPU.");
  ASSERT_EQ(text.samples.size(), 14u);
  EXPECT_TRUE(std::isnan(text.samples[4].value));
  EXPECT_EQ(text.samples[8].name, "request_success_total");
  EXPECT_EQ(text.samples[8].value, 2267);
}

TEST(PromText, ReadsTritonTgiDcgmAndNpuExporterPages) {
  EXPECT_EQ(parse_prom_text(fixture("triton_trtllm_backend_doc.prom"), "t").samples.size(), 10u);
  EXPECT_EQ(parse_prom_text(fixture("tgi_gke_tutorial.prom"), "t").samples.size(), 3u);
  auto dcgm = parse_prom_text(fixture("dcgm_exporter_sample.prom"), "d");
  EXPECT_EQ(dcgm.help.at("DCGM_FI_DEV_GPU_TEMP"), "GPU temperature (in °C).");
  auto npu = parse_prom_text(fixture("npu_exporter_sample.prom"), "n");
  ASSERT_FALSE(npu.samples.empty());
  EXPECT_EQ(npu.samples.back().timestamp_ms, 1723621883587);
}

TEST(PromText, ReadsEscapesBlanksSignsAndTimestamps) {
  auto text = parse_prom_text(
      "# HELP a A \\\\ back\\nslash\n# a plain comment\n\n"
      "a{ x = \"q\\\"uote\" , y=\"new\\nline\\\\\",} +Inf -12\n"
      "b -inf\nc NaN 5\nd 1e3\r\ne{} .5\n",
      "x");
  ASSERT_EQ(text.samples.size(), 5u);
  EXPECT_EQ(text.help.at("a"), "A \\ back\nslash");
  EXPECT_EQ(text.samples[0].labels[0].second, "q\"uote");
  EXPECT_EQ(text.samples[0].labels[1].second, "new\nline\\");
  EXPECT_TRUE(std::isinf(text.samples[0].value) && text.samples[0].value > 0);
  EXPECT_EQ(text.samples[0].timestamp_ms, -12);
  EXPECT_TRUE(std::isinf(text.samples[1].value) && text.samples[1].value < 0);
  EXPECT_TRUE(std::isnan(text.samples[2].value));
  EXPECT_EQ(text.samples[3].value, 1000);
  EXPECT_EQ(text.samples[4].value, 0.5);
}

TEST(PromText, RefusesWhatIsNotTheFormatNamingTheLine) {
  EXPECT_EQ(error_of("ok 1\n9bad 1\n"), "m.prom:2: expected a metric name (got '9bad 1')");
  EXPECT_EQ(error_of("a{x=\"1\" 2\n"), "m.prom:1: expected ',' or '}' after a label value (got '2')");
  EXPECT_EQ(error_of("a{x=\"1} 2\n"), "m.prom:1: expected a closing '\"' of the label value (got '')");
  EXPECT_EQ(error_of("a{x=\"\\t\"} 2\n"),
            "m.prom:1: expected an escape \\\\, \\\" or \\n in a label value (got 't\"} 2')");
  EXPECT_EQ(error_of("a{x=\"1\",x=\"2\"} 2\n"),
            "m.prom:1: expected each label once (x is repeated) (got '=\"2\"} 2')");
  EXPECT_EQ(error_of("a one\n"), "m.prom:1: expected a value (a number, NaN, +Inf or -Inf) (got '')");
  EXPECT_EQ(error_of("a 1 12.5\n"),
            "m.prom:1: expected a timestamp in milliseconds after the value (got '')");
  EXPECT_EQ(error_of("a 1 2 3\n"), "m.prom:1: expected the end of the line after the timestamp (got '3')");
  EXPECT_EQ(error_of("# TYPE a gauges\n"),
            "m.prom:1: expected counter, gauge, histogram, summary or untyped after # TYPE a "
            "(got '')");
  EXPECT_EQ(error_of("<html>\n"), "m.prom:1: expected a metric name (got '<html>')");
}

}  // namespace
}  // namespace plumb::serve
