// plumb precision compare: what the two inputs are, the pairs they make, each pair compared on a
// pool of threads (results kept in the pairs' order whatever the threads do), and the first
// divergence of a dump.
#include "precision/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <unordered_map>

#include "common/error.h"
#include "precision/msprobe_dump.h"

namespace plumb::precision {

namespace {

namespace fs = std::filesystem;

// Calls listed as the first divergence, at most: see first_divergence().
constexpr size_t kFirstDivergenceCalls = 5;
// Lines of one error message listing the pairs that could not be read.
constexpr size_t kMaxErrorLines = 20;

// ---- the inputs ------------------------------------------------------------------------------

enum class InputKind : uint8_t { kFile, kDirectory, kDumpJson, kDump };

struct Input {
  std::string path;
  InputKind kind = InputKind::kFile;
  std::vector<std::string> dump_dirs;  // kDump: relative to path ("" for path itself)
};

std::string_view kind_text(InputKind kind) {
  switch (kind) {
    case InputKind::kFile: return "a tensor file";
    case InputKind::kDirectory: return "a directory with no dump.json (in it, in rank*/ or in step*/rank*/)";
    case InputKind::kDumpJson: return "an msprobe dump.json";
    case InputKind::kDump: return "an msprobe dump";
  }
  return "";
}

bool is_dump(InputKind kind) { return kind == InputKind::kDumpJson || kind == InputKind::kDump; }

Input classify(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw Error(fmt::format("{}: cannot read: {}", path, ec ? ec.message() : "No such file or directory"));
  }
  Input in;
  in.path = path;
  if (fs::is_directory(status)) {
    in.dump_dirs = find_dump_dirs(path);
    in.kind = in.dump_dirs.empty() ? InputKind::kDirectory : InputKind::kDump;
  } else if (fs::path(path).extension() == ".json") {
    in.kind = InputKind::kDumpJson;
    in.dump_dirs = {""};
  }
  return in;
}

// ---- pairing ---------------------------------------------------------------------------------

using Match = std::pair<std::optional<size_t>, std::optional<size_t>>;

// Pairs equal names of a and b in a's order; a name only in b comes right after the name that
// precedes it in b (so a call only in B sits where B ran it).
std::vector<Match> merge_order(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::unordered_map<std::string_view, size_t> in_a, in_b;
  for (size_t i = a.size(); i-- > 0;) in_a[a[i]] = i;
  for (size_t j = b.size(); j-- > 0;) in_b[b[j]] = j;
  std::vector<std::vector<size_t>> after(a.size() + 1);  // [0]: before a[0]; [i + 1]: after a[i]
  size_t anchor = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    const auto it = in_a.find(b[j]);
    if (it != in_a.end()) {
      anchor = it->second + 1;
    } else {
      after[anchor].push_back(j);
    }
  }
  std::vector<Match> out;
  out.reserve(a.size() + b.size());
  for (size_t j : after[0]) out.push_back({std::nullopt, j});
  for (size_t i = 0; i < a.size(); ++i) {
    const auto it = in_b.find(a[i]);
    out.push_back({i, it == in_b.end() ? std::nullopt : std::optional<size_t>(it->second)});
    for (size_t j : after[i + 1]) out.push_back({std::nullopt, j});
  }
  return out;
}

Judgement unmatched(std::string why) { return {Verdict::kUnmatched, std::move(why)}; }

Judgement only_in(const Match& m) { return unmatched(m.first ? "only in A" : "only in B"); }

// ---- the pool --------------------------------------------------------------------------------

// CompareOptions::threads as a count: 0 is every core.
size_t thread_count(int threads) {
  return threads > 0 ? static_cast<size_t>(threads) : std::max<size_t>(1, std::thread::hardware_concurrency());
}

// Runs work(0) ... work(n − 1) on `threads` threads (0: every core). Every failure is kept and
// all of them are reported together, in index order, once every item has run.
void parallel_for(size_t n, int threads, const std::function<void(size_t)>& work) {
  std::vector<std::string> errors(n);
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        work(i);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  const size_t count = std::min(n, thread_count(threads));
  if (count <= 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < count; ++t) pool.emplace_back(worker);
  }
  std::vector<std::string> lines;
  size_t failed = 0;
  for (std::string& e : errors) {
    if (e.empty()) continue;
    if (++failed <= kMaxErrorLines) lines.push_back(std::move(e));
  }
  if (failed > kMaxErrorLines) lines.push_back(fmt::format("(and {} more)", failed - kMaxErrorLines));
  if (!lines.empty()) throw Error(fmt::format("{}", fmt::join(lines, "\n")));
}

// ---- tensors ---------------------------------------------------------------------------------

// Compares two tensors already read; shapes must agree ("shape unmatched" otherwise).
void judge_tensors(PairResult& p, const Tensor& a, const Tensor& b, const CompareOptions& o, const Rule& rule) {
  if (a.shape != b.shape) {
    p.judgement = unmatched("shape unmatched");
    return;
  }
  p.metrics = compare_tensors(a, b, o.metrics);
  p.judgement = rule.judge(*p.metrics, a.dtype, o.thresholds);
}

Side tensor_side(const Tensor& t) { return Side{t.name, std::string(dtype_name(t.dtype)), t.shape, std::nullopt}; }

// The key of a tensor in its file: "" for a file's only tensor, else what follows "path:".
std::string_view key_in_file(const Tensor& t, const std::string& path) {
  const std::string_view name = t.name;
  if (name == path) return {};
  if (name.size() > path.size() && name.substr(0, path.size()) == path && name[path.size()] == ':') {
    return name.substr(path.size() + 1);
  }
  return name;
}

// Two files: one tensor each is one pair (by position); else every tensor paired by its key.
std::vector<PairResult> compare_files(const std::string& pa, const std::string& pb, const std::string& name,
                                      const CompareOptions& o, const Rule& rule) {
  const std::vector<Tensor> ta = read_tensors(pa, o.read);
  const std::vector<Tensor> tb = read_tensors(pb, o.read);
  std::vector<PairResult> out;
  if (ta.size() == 1 && tb.size() == 1) {
    PairResult& p = out.emplace_back();
    p.name = name;
    p.a = tensor_side(ta[0]);
    p.b = tensor_side(tb[0]);
    judge_tensors(p, ta[0], tb[0], o, rule);
    return out;
  }
  std::vector<std::string_view> ka, kb;
  for (const Tensor& t : ta) ka.push_back(key_in_file(t, pa));
  for (const Tensor& t : tb) kb.push_back(key_in_file(t, pb));
  for (const Match& m : merge_order(ka, kb)) {
    PairResult& p = out.emplace_back();
    const std::string_view key = m.first ? ka[*m.first] : kb[*m.second];
    p.name = key.empty() ? name : fmt::format("{}:{}", name, key);
    if (m.first) p.a = tensor_side(ta[*m.first]);
    if (m.second) p.b = tensor_side(tb[*m.second]);
    if (m.first && m.second) {
      judge_tensors(p, ta[*m.first], tb[*m.second], o, rule);
    } else {
      p.judgement = only_in(m);
    }
  }
  return out;
}

// Every file under root that a reader knows by its extension, relative, sorted.
std::vector<std::string> tensor_files(const std::string& root) {
  std::set<std::string> extensions;
  for (const Format& f : formats()) {
    std::string_view list = f.extensions;
    while (!list.empty()) {
      const size_t space = list.find(' ');
      if (space != 0) extensions.emplace(list.substr(0, space));
      if (space == std::string_view::npos) break;
      list.remove_prefix(space + 1);
    }
  }
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || !extensions.contains(it->path().extension().string())) continue;
    out.push_back(fs::relative(it->path(), root).generic_string());
  }
  if (ec) throw Error(fmt::format("{}: cannot list: {}", root, ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

CompareResult compare_directories(const Input& a, const Input& b, const CompareOptions& o, const Rule& rule) {
  CompareResult r;
  r.mode = "directories";
  const std::vector<std::string> fa = tensor_files(a.path), fb = tensor_files(b.path);
  // Both lists are sorted; so is their union.
  std::vector<Match> matches = merge_order({fa.begin(), fa.end()}, {fb.begin(), fb.end()});
  const auto rel_of = [&](const Match& m) -> const std::string& { return m.first ? fa[*m.first] : fb[*m.second]; };
  std::stable_sort(matches.begin(), matches.end(), [&](const Match& x, const Match& y) { return rel_of(x) < rel_of(y); });
  std::vector<std::vector<PairResult>> slots(matches.size());
  parallel_for(matches.size(), o.threads, [&](size_t i) {
    const Match& m = matches[i];
    const std::string& rel = rel_of(m);
    const std::string pa = (fs::path(a.path) / rel).string(), pb = (fs::path(b.path) / rel).string();
    if (m.first && m.second) {
      slots[i] = compare_files(pa, pb, rel, o, rule);
      return;
    }
    PairResult& p = slots[i].emplace_back();
    p.name = rel;
    (m.first ? p.a : p.b) = Side{m.first ? pa : pb, "", {}, std::nullopt};
    p.judgement = only_in(m);
  });
  for (auto& slot : slots) std::move(slot.begin(), slot.end(), std::back_inserter(r.pairs));
  return r;
}

// ---- dumps -----------------------------------------------------------------------------------

struct DumpTensorRef {
  const DumpCall* call;
  const DumpTensor* tensor;
};

std::vector<DumpTensorRef> flatten(const MsprobeDump* dump) {
  std::vector<DumpTensorRef> out;
  if (dump == nullptr) return out;
  out.reserve(dump->tensors());
  for (const DumpCall& c : dump->calls) {
    for (const DumpTensor& t : c.tensors) out.push_back({&c, &t});
  }
  return out;
}

Side dump_side(const MsprobeDump& dump, const DumpTensor& t, bool tensors) {
  return Side{tensors && !t.data_name.empty() ? dump.tensor_path(t) : fmt::format("{}:{}", dump.path, t.key), t.dtype,
              t.shape, dump_stats(t)};
}

// The one tensor of an msprobe tensor file.
Tensor read_dump_tensor(const std::string& path) {
  std::vector<Tensor> tensors = read_tensors(path);
  if (tensors.size() != 1) {
    throw Error(fmt::format("{}: holds {} tensors; a tensor file of an msprobe dump holds one", path, tensors.size()));
  }
  return std::move(tensors[0]);
}

// The first divergence (issue 16). Walking the calls of one rank in execution order, a call whose
// compared inputs (input and parameter pairs judged pass or fail; an unmatched pair says nothing)
// all pass, or that has none, while one of its outputs fails, introduced the error itself: what
// went in was right and what came out was wrong. Its failing output pairs are listed. After
// kFirstDivergenceCalls such calls the walk stops: downstream of a divergence nearly every call
// has failing inputs, and the few that seem to diverge anew are mostly its echo (noise).
void first_divergence(const std::vector<PairResult>& pairs, size_t begin, size_t end, std::vector<size_t>& out) {
  std::vector<std::vector<size_t>> calls;
  std::unordered_map<std::string_view, size_t> call_of;
  for (size_t i = begin; i < end; ++i) {
    const auto [it, added] = call_of.try_emplace(pairs[i].api, calls.size());
    if (added) calls.emplace_back();
    calls[it->second].push_back(i);
  }
  size_t found = 0;
  for (const std::vector<size_t>& call : calls) {
    bool inputs_fail = false;
    std::vector<size_t> failing_outputs;
    for (size_t i : call) {
      const bool fails = pairs[i].judgement.verdict == Verdict::kFail;
      if (pairs[i].role == PairRole::kOutput) {
        if (fails) failing_outputs.push_back(i);
      } else if (fails) {
        inputs_fail = true;
      }
    }
    if (inputs_fail || failing_outputs.empty()) continue;
    out.insert(out.end(), failing_outputs.begin(), failing_outputs.end());
    if (++found == kFirstDivergenceCalls) return;
  }
}

// The two sides' rank folders, paired: by position when each side has one, else by relative path.
struct RankPair {
  std::string prefix;  // "step0/rank1/" when several ranks are compared, else ""
  std::optional<size_t> a, b;
};

std::vector<RankPair> rank_pairs(const Input& a, const Input& b) {
  if (a.dump_dirs.size() == 1 && b.dump_dirs.size() == 1) return {{"", 0, 0}};
  std::vector<RankPair> out;
  for (const Match& m : merge_order({a.dump_dirs.begin(), a.dump_dirs.end()}, {b.dump_dirs.begin(), b.dump_dirs.end()})) {
    const std::string& rel = m.first ? a.dump_dirs[*m.first] : b.dump_dirs[*m.second];
    out.push_back({rel.empty() ? "" : rel + "/", m.first, m.second});
  }
  return out;
}

std::string dump_json_of(const Input& in, const std::string& rel) {
  if (in.kind == InputKind::kDumpJson) return in.path;
  return (fs::path(in.path) / rel / "dump.json").string();
}

// Reads every dump.json of both sides in parallel: a's first, then b's.
std::vector<MsprobeDump> read_dumps(const Input& a, const Input& b, int threads) {
  std::vector<std::string> paths;
  for (const std::string& rel : a.dump_dirs) paths.push_back(dump_json_of(a, rel));
  for (const std::string& rel : b.dump_dirs) paths.push_back(dump_json_of(b, rel));
  std::vector<MsprobeDump> dumps(paths.size());
  parallel_for(paths.size(), threads, [&](size_t i) { dumps[i] = read_dump(paths[i]); });
  return dumps;
}

// Both sides' task ("statistics" or "tensor"), the same everywhere unless only the summaries are
// compared; the comparison's mode.
std::string dump_mode(const std::vector<MsprobeDump>& dumps, const CompareOptions& o) {
  for (const MsprobeDump& d : dumps) {
    if (d.task != "statistics" && d.task != "tensor") {
      throw Error(fmt::format("{}: task '{}': plumb compares 'statistics' and 'tensor' dumps", d.path, d.task));
    }
  }
  for (const MsprobeDump& d : dumps) {
    if (d.task != dumps.front().task && !o.statistics) {
      throw Error(fmt::format(
          "{} is a '{}' dump and {} a '{}' dump; compare dumps of one task, or compare only their summaries "
          "(--statistics)",
          dumps.front().path, dumps.front().task, d.path, d.task));
    }
  }
  return !o.statistics && dumps.front().task == "tensor" ? "dump-tensors" : "dump-statistics";
}

// One rank's two sides (either may be missing) and their tensors in execution order.
struct RankSides {
  const MsprobeDump* a;
  const MsprobeDump* b;
  std::vector<DumpTensorRef> ta, tb;
};

// A dump's max or min given as NaN or ±Inf (msprobe's CheckOverflow; an absent one is not).
bool overflows(const DumpTensor& t) {
  return (t.max && !std::isfinite(*t.max)) || (t.min && !std::isfinite(*t.min));
}

// One pair of a dump: judged at once unless its tensors must be read (`pending`).
PairResult dump_pair(const RankPair& rp, const RankSides& s, const Match& m, bool tensors, const CompareOptions& o,
                     const Rule& rule, bool& pending) {
  const DumpTensorRef& ref = m.first ? s.ta[*m.first] : s.tb[*m.second];
  PairResult p;
  p.name = rp.prefix + ref.tensor->key;
  p.api = rp.prefix + ref.call->api;
  p.role = ref.tensor->role;
  if (m.first) p.a = dump_side(*s.a, *s.ta[*m.first].tensor, tensors);
  if (m.second) p.b = dump_side(*s.b, *s.tb[*m.second].tensor, tensors);
  pending = false;
  if (!m.first || !m.second) {
    p.judgement = only_in(m);
  } else if (p.a->shape != p.b->shape) {
    p.judgement = unmatched("shape unmatched");
  } else if (tensors && !s.ta[*m.first].tensor->data_name.empty() && !s.tb[*m.second].tensor->data_name.empty()) {
    pending = true;
  } else {  // statistics mode, or an entry without its file: the summaries
    p.stat_diffs = stat_diffs(*p.a->stats, *p.b->stats);
    p.stat_diffs->a_overflow = overflows(*s.ta[*m.first].tensor);
    p.judgement = rule.judge_stats(*p.stat_diffs, o.thresholds);
  }
  return p;
}

CompareResult compare_dumps(const Input& a, const Input& b, const CompareOptions& o, const Rule& rule) {
  const std::vector<MsprobeDump> dumps = read_dumps(a, b, o.threads);
  CompareResult r;
  r.mode = dump_mode(dumps, o);
  const bool tensors = r.mode == "dump-tensors";
  std::vector<size_t> pending;
  std::vector<std::pair<size_t, size_t>> ranks;  // each rank pair's range of pairs
  for (const RankPair& rp : rank_pairs(a, b)) {
    RankSides s{rp.a ? &dumps[*rp.a] : nullptr, rp.b ? &dumps[a.dump_dirs.size() + *rp.b] : nullptr, {}, {}};
    s.ta = flatten(s.a);
    s.tb = flatten(s.b);
    std::vector<std::string_view> ka, kb;
    for (const DumpTensorRef& t : s.ta) ka.push_back(t.tensor->key);
    for (const DumpTensorRef& t : s.tb) kb.push_back(t.tensor->key);
    const size_t begin = r.pairs.size();
    for (const Match& m : merge_order(ka, kb)) {
      bool wait = false;
      r.pairs.push_back(dump_pair(rp, s, m, tensors, o, rule, wait));
      if (wait) pending.push_back(r.pairs.size() - 1);
    }
    ranks.emplace_back(begin, r.pairs.size());
  }
  parallel_for(pending.size(), o.threads, [&](size_t i) {
    PairResult& p = r.pairs[pending[i]];
    const Tensor ta = read_dump_tensor(p.a->source), tb = read_dump_tensor(p.b->source);
    judge_tensors(p, ta, tb, o, rule);
  });
  for (const auto& [begin, end] : ranks) first_divergence(r.pairs, begin, end, r.first_divergence);
  return r;
}

}  // namespace

size_t CompareResult::failed() const {
  return std::count_if(pairs.begin(), pairs.end(), [](const PairResult& p) { return p.judgement.verdict == Verdict::kFail; });
}

size_t CompareResult::unmatched() const {
  return std::count_if(pairs.begin(), pairs.end(),
                       [](const PairResult& p) { return p.judgement.verdict == Verdict::kUnmatched; });
}

CompareResult compare(const std::string& a, const std::string& b, const CompareOptions& options) {
  const Rule& rule = rule_named(options.rule);
  const Input ia = classify(a), ib = classify(b);
  CompareResult r;
  if (ia.kind == InputKind::kFile && ib.kind == InputKind::kFile) {
    // Two files are compared one pair after the other: each large pair is split over the threads
    // instead (elsewhere the pairs share them).
    CompareOptions split = options;
    split.metrics.threads = std::max(options.metrics.threads, static_cast<int>(thread_count(options.threads)));
    r.mode = "files";
    r.pairs = compare_files(a, b, a, split, rule);
  } else if (ia.kind == InputKind::kDirectory && ib.kind == InputKind::kDirectory) {
    r = compare_directories(ia, ib, options, rule);
  } else if (is_dump(ia.kind) && is_dump(ib.kind)) {
    r = compare_dumps(ia, ib, options, rule);
  } else {
    throw Error(fmt::format(
        "{} is {} and {} {}; plumb compares two tensor files, two directories of them, or two "
        "msprobe dumps",
        a, kind_text(ia.kind), b, kind_text(ib.kind)));
  }
  for (size_t i = 0; i < r.pairs.size(); ++i) r.pairs[i].order = i;
  r.a = a;
  r.b = b;
  r.rule = rule.name;
  return r;
}

}  // namespace plumb::precision
