// The server's own Prometheus /metrics (vLLM, TGI, Triton, MindIE), scraped before, during and
// after a run and kept beside the client's numbers (docs/serve.md, "Server side").
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::serve {

// One series over the run: (seconds from the run's start, value); before is at t < 0, after at
// t > the run's duration.
struct ServerSeries {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> points;
};

struct ServerScrape {
  std::string url;
  std::vector<ServerSeries> series;
  std::string problem;  // one line when a scrape failed ("GET http://h:8000/metrics: HTTP 404")
};

nlohmann::json server_scrape_json(const ServerScrape& scrape);

}  // namespace plumb::serve
