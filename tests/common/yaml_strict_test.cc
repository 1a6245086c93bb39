#include "common/yaml_strict.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/number_range.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::vector<std::string> kKnown = {"hidden", "layers", "heads"};

std::vector<std::string> messages(const std::string& yaml, std::string_view where = {}) {
  std::vector<std::string> out;
  for (const YamlProblem& p : key_problems(YAML::Load(yaml), kKnown, where)) {
    out.push_back(std::to_string(p.line) + ": " + p.message);
  }
  return out;
}

// yaml-cpp keeps both entries of a repeated key when it iterates a map (and map[key] returns the
// first): the repeated one is reported at its own line with the first one's.
TEST(YamlKeys, DuplicateKeyNamesBothLines) {
  EXPECT_EQ(messages("layers: 4\nheads: 8\nhidden: 256\nhidden: 512\n"),
            (std::vector<std::string>{"4: duplicate key 'hidden' (first at line 3)"}));
  // Quoted or in flow style it is the same key.
  EXPECT_EQ(messages("{hidden: 1, \"hidden\": 2}"),
            (std::vector<std::string>{"1: duplicate key 'hidden' (first at line 1)"}));
}

TEST(YamlKeys, UnknownKeySuggestsTheClosestAndListsAll) {
  EXPECT_EQ(messages("layers: 4\nhiden: 256\n"),
            (std::vector<std::string>{"2: unknown key 'hiden' (did you mean 'hidden'?); expected "
                                      "one of hidden, layers, heads"}));
  EXPECT_EQ(messages("zzz: 1\n", "moe"),
            (std::vector<std::string>{"1: unknown key 'zzz' in moe; expected one of hidden, "
                                      "layers, heads"}));
  EXPECT_EQ(messages("? [a, b]\n: 1\n"),
            (std::vector<std::string>{"1: a key must be a plain name, one of hidden, layers, heads"}));
}

TEST(YamlKeys, AKnownKeyOnceIsFine) { EXPECT_TRUE(messages("layers: 4\nheads: 8\n").empty()); }

TEST(NumberRange, DescribesItself) {
  EXPECT_EQ(describe({1, 16777216, false, true}), "a whole number from 1 to 16777216");
  EXPECT_EQ(describe({0, 1e6, true}), "a number above 0 and at most 1e+06");
  EXPECT_EQ(describe({1, 3}), "a number from 1 to 3");
}

TEST(NumberRange, RefusesNonFiniteOutOfRangeAndFractions) {
  const NumberRange count{1, 1000, false, true};
  std::string problem;
  EXPECT_EQ(parse_number("1e3", count, problem), 1000);
  EXPECT_EQ(parse_number("8", count, problem), 8);
  const struct {
    std::string text;
    std::string problem;
  } cases[] = {
      {"0", "must be a whole number from 1 to 1000, got '0'"},
      {"-3", "must be a whole number from 1 to 1000, got '-3'"},
      {"1.5", "must be a whole number from 1 to 1000, got '1.5'"},
      {"nan", "must be a whole number from 1 to 1000, got 'nan'"},
      {"inf", "must be a whole number from 1 to 1000, got 'inf'"},
      {"12abc", "must be a whole number from 1 to 1000, got '12abc'"},
      {"", "must be a whole number from 1 to 1000, got ''"},
      {std::string(300, '9'), "must be a whole number from 1 to 1000, got '999999999999999999999...'"},
  };
  for (const auto& c : cases) {
    problem.clear();
    EXPECT_FALSE(parse_number(c.text, count, problem).has_value()) << c.text;
    EXPECT_EQ(problem, c.problem);
  }
  const NumberRange positive{0, 1, true};
  EXPECT_FALSE(parse_number("0", positive, problem).has_value());
  EXPECT_EQ(problem, "must be a number above 0 and at most 1, got '0'");
  EXPECT_EQ(parse_number("0.5", positive, problem), 0.5);
}

TEST(YamlNumber, ScalarsListsAndMaps) {
  std::string problem;
  EXPECT_EQ(yaml_number(YAML::Load("2.5"), {0, 10}, problem), 2.5);
  EXPECT_FALSE(yaml_number(YAML::Load(".nan"), {0, 10}, problem).has_value());
  EXPECT_EQ(problem, "must be a number from 0 to 10, got '.nan'");
  EXPECT_FALSE(yaml_number(YAML::Load("[1, 2]"), {0, 10}, problem).has_value());
  EXPECT_EQ(problem, "must be a number from 0 to 10, got a list");
}

TEST(ReadTextFile, DirectoryAndMissingFileAreOneLine) {
  const std::string dir = test::temp_dir("read-text-file");
  try {
    read_text_file(dir, "model file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": is a directory, not a model file");
  }
  try {
    read_text_file(dir + "/absent.yaml", "model file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + "/absent.yaml: cannot read the model file: No such file or directory");
  }
  test::write_file(dir + "/m.yaml", "a: 1\n");
  EXPECT_EQ(read_text_file(dir + "/m.yaml", "model file"), "a: 1\n");
}

// /dev/zero never ends: reading stops past kMaxTextFileBytes with one line.
TEST(ReadTextFile, EndlessFileStopsAtTheLimit) {
  try {
    read_text_file("/dev/zero", "model file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/zero: more than 16 MiB, not a model file");
  }
}

TEST(LoadYamlFile, SyntaxErrorNamesFileAndLine) {
  const std::string path = test::temp_dir("load-yaml-file") + "/bad.yaml";
  test::write_file(path, "a: 1\nb: [1\n");
  try {
    load_yaml_file(path, "model file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3: not valid YAML: end of sequence flow not found");
  }
}

// yaml-cpp 0.7's LoadAll reads a document it cannot parse again and again, adding a null document
// each time until memory runs out (jbeder/yaml-cpp#1319): refused, with the documents' count kept.
TEST(LoadYamlDocuments, ADocumentReadForEverIsRefused) {
  try {
    load_yaml_documents("\n,\n", "hn.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "hn.yaml:2: not valid YAML: a document that cannot be read (it would be read again for ever)");
  }
  EXPECT_EQ(load_yaml_documents("a: 1\n---\nb: 2\n---\n", "hn.yaml").size(), 3u);
}

}  // namespace
}  // namespace plumb
