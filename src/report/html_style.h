// The style every plumb HTML page shares (the baseline report, the mem report): inline, since a
// page must open from disk with no network. Each page adds its own rules after these.
#pragma once

#include <string_view>

namespace plumb::report {

// The end of every self-contained page: the footer and the closing tags.
inline constexpr std::string_view kPageEnd =
    "<footer class=\"note\"><p>plumb " PLUMB_VERSION " · one self-contained file: no script, no "
    "network.</p></footer>\n</body></html>\n";

inline constexpr std::string_view kPageStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:16px 0 6px}section{overflow-x:auto}
nav a{margin-right:12px}
table{border-collapse:collapse;margin:4px 0 12px}
th,td{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#666}.warning,.warnings li{color:#a40000}
figure.chart{margin:12px 0 24px;border:1px solid #e2e2e2;padding:8px}
figcaption{font-weight:600;font-size:15px}
.legend span{margin-right:16px;white-space:nowrap}svg.key{width:28px;height:10px;margin-right:4px}
.grid{stroke:#eee}.frame{fill:none;stroke:#999}
.tick,.axis{font-size:11px;fill:#555}.ptitle{font-size:13px;font-weight:600;fill:#222}
.empty{font-size:13px;fill:#888}
.d1{stroke-dasharray:6 3}
.pts circle:hover{stroke:#000;stroke-width:2}
)";

}  // namespace plumb::report
