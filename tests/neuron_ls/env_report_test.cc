// The neuron-ls --env renderings: an aligned table and JSON.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tools/neuron-ls/env_report.h"
#include "tests/config/config_test_util.h"

namespace neuron::ls {
namespace {

using config::AllVariables;
using config::Resolution;
using config::testing::ResolveWith;
using config::testing::Trn1Small;


std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(EnvTable, OneAlignedRowPerVariable) {
  Resolution r = ResolveWith({{"NEURON_RT_EXEC_TIMEOUT", "90"}}, Trn1Small());
  std::vector<std::string> lines = Lines(FormatEnvTable(r));
  ASSERT_GE(lines.size(), AllVariables().size() + 1);
  EXPECT_EQ(lines[0].rfind("NAME", 0), 0u);
  const size_t value_column = lines[0].find("VALUE");
  const size_t source_column = lines[0].find("SOURCE");
  ASSERT_NE(value_column, std::string::npos);
  ASSERT_NE(source_column, std::string::npos);
  for (size_t i = 0; i < AllVariables().size(); ++i) {
    const std::string& line = lines[i + 1];
    EXPECT_EQ(line.rfind(AllVariables()[i].name + " ", 0), 0u) << line;
    EXPECT_NE(line[value_column], ' ') << "value not aligned: " << line;
  }
  bool found = false;
  for (const std::string& line : lines) {
    if (line.rfind("NEURON_RT_EXEC_TIMEOUT ", 0) == 0) {
      found = true;
      EXPECT_EQ(line.substr(value_column, 2), "90");
      EXPECT_EQ(line.substr(source_column, 3), "env");
      const size_t effect_column = lines[0].find("EFFECT");
      ASSERT_NE(effect_column, std::string::npos);
      EXPECT_EQ(line.substr(effect_column), "simulated");
    }
  }
  EXPECT_TRUE(found);
}

TEST(EnvTable, ShowsDiagnosticsAndTheInitError) {
  Resolution r = ResolveWith({{"NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "99"},
                              {"NEURON_RT_VISIBLE_CORES", "0-9"}},
                             Trn1Small());
  std::string table = FormatEnvTable(r);
  EXPECT_NE(table.find("warning: NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=99"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("NRT_INVALID: NEURON_RT_VISIBLE_CORES=0-9: core 9 does not exist"),
            std::string::npos)
      << table;
  Resolution clean = ResolveWith({}, Trn1Small());
  EXPECT_EQ(FormatEnvTable(clean).find("NRT_INVALID"), std::string::npos);
}

TEST(EnvJson, HasTheDocumentedShape) {
  Resolution r = ResolveWith({{"NEURON_RT_NUM_CORES", "1"}}, Trn1Small());
  nlohmann::json j = nlohmann::json::parse(FormatEnvJson(r));
  ASSERT_TRUE(j["variables"].is_array());
  ASSERT_EQ(j["variables"].size(), AllVariables().size());
  for (size_t i = 0; i < AllVariables().size(); ++i) {
    const nlohmann::json& v = j["variables"][i];
    EXPECT_EQ(v["name"], AllVariables()[i].name);
    EXPECT_TRUE(v["value"].is_string()) << v.dump();
    std::string source = v["source"];
    EXPECT_TRUE(source == "default" || source == "env" || source == "derived") << source;
  }
  EXPECT_EQ(j["variables"][0]["name"], "NEURON_RT_VISIBLE_CORES");
  EXPECT_EQ(j["variables"][0]["value"], "0");
  EXPECT_EQ(j["variables"][0]["source"], "derived");
  ASSERT_TRUE(j["diagnostics"].is_array());
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["severity"], "warning");
  EXPECT_EQ(j["diagnostics"][0]["variable"], "NEURON_RT_NUM_CORES");
  EXPECT_EQ(j["init_status"], "NRT_SUCCESS");
  EXPECT_EQ(j["init_error"], "");
}

TEST(EnvJson, ReportsTheInitError) {
  Resolution r = ResolveWith({{"NEURON_RT_EXEC_TIMEOUT", "soon"}}, Trn1Small());
  nlohmann::json j = nlohmann::json::parse(FormatEnvJson(r));
  EXPECT_EQ(j["init_status"], "NRT_INVALID");
  EXPECT_EQ(j["init_error"], r.init_error);
}

TEST(EnvJson, InvalidUtf8InTheEnvironmentDoesNotThrow) {
  Resolution r = ResolveWith({{"NEURON_RT_INSPECT_OUTPUT_DIR", "/tmp/\xff\xfe"}}, Trn1Small());
  std::string json;
  ASSERT_NO_THROW(json = FormatEnvJson(r));
  EXPECT_NO_THROW(nlohmann::json::parse(json));
}

}  // namespace
}  // namespace neuron::ls
