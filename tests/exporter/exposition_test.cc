#include "exporter/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "exporter/series.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

std::string value_text(double v) {
  std::string out;
  append_value(out, v);
  return out;
}

Family gauge(std::string name, std::string help, std::vector<Sample> samples) {
  return {std::move(name), std::move(help), "gauge", std::move(samples)};
}

TEST(Exposition, ValuesAreExactIntegersShortestRoundTripOrNamedSpecials) {
  EXPECT_EQ(value_text(0), "0");
  EXPECT_EQ(value_text(-0.0), "0");
  EXPECT_EQ(value_text(42), "42");
  EXPECT_EQ(value_text(-7), "-7");
  EXPECT_EQ(value_text(85899345920.0), "85899345920");      // 80 GiB in bytes, no exponent
  EXPECT_EQ(value_text(9007199254740993.0), "9007199254740992");  // the double's own value
  EXPECT_EQ(value_text(1e18), "1000000000000000000");
  EXPECT_EQ(value_text(1e19), "1e+19");
  EXPECT_EQ(value_text(0.1), "0.1");
  EXPECT_EQ(value_text(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(value_text(45.5), "45.5");
  EXPECT_EQ(value_text(1.5e-7), "1.5e-07");
  EXPECT_EQ(value_text(NAN), "NaN");
  EXPECT_EQ(value_text(INFINITY), "+Inf");
  EXPECT_EQ(value_text(-INFINITY), "-Inf");
}

TEST(Exposition, NamesFollowPrometheusRules) {
  EXPECT_TRUE(valid_metric_name("plumb:device_hbm_used_bytes"));
  EXPECT_TRUE(valid_metric_name("_x9"));
  EXPECT_FALSE(valid_metric_name(""));
  EXPECT_FALSE(valid_metric_name("9x"));
  EXPECT_FALSE(valid_metric_name("a-b"));
  EXPECT_FALSE(valid_metric_name("a\xC3\xA9"));
  EXPECT_TRUE(valid_label_name("device"));
  EXPECT_TRUE(valid_label_name("_a1"));
  EXPECT_FALSE(valid_label_name("__name__"));
  EXPECT_FALSE(valid_label_name("a:b"));
  EXPECT_FALSE(valid_label_name("1a"));
  EXPECT_FALSE(valid_label_name(""));
}

TEST(Exposition, RendersHelpTypeAndEscapedLabelsExactly) {
  const Families families = {
      gauge(series::kTemperature, "Device temperature, degrees Celsius.\nFrom C:\\smi",
            {{{{"host", "node-1"}, {"device", "0"}}, 45, ""},
             {{{"host", "a\"b\\c\nd"}, {"device", "NPU-\xC2\xB5"}}, 45.5, ""}}),
      {"plumb_exporter_scrapes_total", "Scrapes answered.", "counter", {{{}, 3, ""}}},
      gauge(series::kPower, "Never sampled: left out.", {}),
      {"plumb_train_step_seconds_summary", "Step time.", "summary",
       {{{{"quantile", "0.5"}}, 0.25, ""}, {{}, 1.5, "_sum"}, {{}, 6, "_count"}}},
  };
  EXPECT_EQ(render_exposition(families),
            "# HELP plumb_device_temperature_celsius Device temperature, degrees Celsius.\\nFrom "
            "C:\\\\smi\n"
            "# TYPE plumb_device_temperature_celsius gauge\n"
            "plumb_device_temperature_celsius{host=\"node-1\",device=\"0\"} 45\n"
            "plumb_device_temperature_celsius{host=\"a\\\"b\\\\c\\nd\",device=\"NPU-\xC2\xB5\"} "
            "45.5\n"
            "# HELP plumb_exporter_scrapes_total Scrapes answered.\n"
            "# TYPE plumb_exporter_scrapes_total counter\n"
            "plumb_exporter_scrapes_total 3\n"
            "# HELP plumb_train_step_seconds_summary Step time.\n"
            "# TYPE plumb_train_step_seconds_summary summary\n"
            "plumb_train_step_seconds_summary{quantile=\"0.5\"} 0.25\n"
            "plumb_train_step_seconds_summary_sum 1.5\n"
            "plumb_train_step_seconds_summary_count 6\n");
}

// A host or operator name from a file is never refused: a byte that is not UTF-8 (a lone
// continuation byte, an overlong form, a surrogate, a cut sequence) becomes U+FFFD.
TEST(Exposition, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  const Families families = {gauge("x", "h\xFF", {{{{"operator", "a\x80" "b\xC0\xAF" "c\xED\xA0\x80" "d\xE2\x82"}}, 1, ""}})};
  EXPECT_EQ(render_exposition(families),
            "# HELP x h\xEF\xBF\xBD\n# TYPE x gauge\n"
            "x{operator=\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "d\xEF\xBF\xBD\xEF\xBF\xBD\"} 1\n");
}

TEST(Exposition, FamiliesOfOneNameShareOneHeaderAcrossParts) {
  const Families events = {gauge(series::kBusbw, "Bus bandwidth.", {{{{"source", "events"}}, 1e9, ""}}),
                           gauge("plumb_train_step", "Last step.", {{{}, 7, ""}})};
  const Families probe = {gauge(series::kBusbw, "Other help, ignored.", {{{{"source", "probe"}}, 2e9, ""}})};
  const std::vector<RenderedFamily> a = render_families(events);
  const std::vector<RenderedFamily> b = render_families(probe);
  std::string out;
  append_exposition(out, {&a, &b});
  EXPECT_EQ(out,
            "# HELP plumb_comm_busbw_bytes_per_second Bus bandwidth.\n"
            "# TYPE plumb_comm_busbw_bytes_per_second gauge\n"
            "plumb_comm_busbw_bytes_per_second{source=\"events\"} 1000000000\n"
            "plumb_comm_busbw_bytes_per_second{source=\"probe\"} 2000000000\n"
            "# HELP plumb_train_step Last step.\n# TYPE plumb_train_step gauge\n"
            "plumb_train_step 7\n");
  const Families twice = {gauge("y", "first", {{{{"a", "1"}}, 1, ""}}),
                          gauge("y", "second", {{{{"a", "2"}}, 2, ""}})};
  EXPECT_EQ(render_exposition(twice), "# HELP y first\n# TYPE y gauge\ny{a=\"1\"} 1\ny{a=\"2\"} 2\n");
}

TEST(Exposition, ABadNameTypeOrSuffixIsAProgrammerError) {
  const auto message = [](const Families& f) {
    try {
      render_exposition(f);
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message({gauge("plumb-x", "", {{{}, 1, ""}})}),
            "exposition: invalid metric name 'plumb-x'");
  EXPECT_EQ(message({gauge("x", "", {{{{"__name__", "y"}}, 1, ""}})}),
            "exposition: x: invalid label name '__name__'");
  EXPECT_EQ(message({{"x", "", "gauges", {{{}, 1, ""}}}}), "exposition: x: unknown type 'gauges'");
  EXPECT_EQ(message({gauge("x", "", {{{}, 1, "_total"}})}),
            "exposition: x: unknown sample suffix '_total'");
  EXPECT_EQ(message({gauge("x", "", {{{}, 1, ""}}), {"x", "", "counter", {{{}, 1, ""}}}}),
            "exposition: x: type counter after gauge");
}

// The real parser: Prometheus' own promtool reads what we render (escapes, specials, a summary)
// without a complaint.
TEST(Exposition, PromtoolAcceptsTheRenderedText) {
  ASSERT_EQ(test::run_command("command -v promtool").exit_code, 0)
      << "promtool is not installed: it comes with Debian's prometheus package "
         "(scripts/install-deps installs it); this test does not skip";
  const Families families = {
      gauge(series::kHbmUsed, "HBM in use, bytes.",
            {{{{"host", "n\"1\\\n"}, {"device", "0"}, {"vendor", "nvidia"}}, 85899345920.0, ""},
             {{{"host", "n2"}, {"device", "1"}, {"vendor", "nvidia"}}, NAN, ""}}),
      gauge(series::kOpRatio, "Last / median per operator.",
            {{{{"host", "n1"}, {"operator", "aten::mm\xFF"}}, INFINITY, ""},
             {{{"host", "n1"}, {"operator", "aten::add"}}, 1.0000001, ""}}),
      {"plumb_exporter_scrapes_total", "Scrapes answered.", "counter", {{{}, 12, ""}}},
      {"plumb_exporter_step_seconds", "Step time.", "summary",
       {{{{"quantile", "0.5"}}, 0.25, ""}, {{}, 1.5, "_sum"}, {{}, 6, "_count"}}},
      {"plumb_exporter_wait_seconds", "Waits.", "histogram",
       {{{{"le", "0.1"}}, 1, "_bucket"}, {{{"le", "+Inf"}}, 2, "_bucket"}, {{}, 0.3, "_sum"},
        {{}, 2, "_count"}}},
  };
  const std::string dir = test::temp_dir("exposition-promtool");
  test::write_file(dir + "/metrics.prom", render_exposition(families));
  const test::Run check = test::run_command("promtool check metrics < " + dir + "/metrics.prom");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out + check.err, "");
}

}  // namespace
}  // namespace plumb::exporter
