// Every variable has an effect entry (lib/config/variable_effects.cc), the
// entries are well formed and point at pages that exist, and
// man/neuron-env.7 is exactly the page the table renders to. When the page
// differs, the expected one is written beside the test binary, to copy over.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "lib/config/variable_effects.h"
#include "tests/support/tool_runner.h"

namespace neuron::config {
namespace {

namespace fs = std::filesystem;

fs::path RepoRoot() { return fs::path(testing::ToolDir()).parent_path(); }

// "neuron-exec(1)" -> {"neuron-exec", "1"}.
std::pair<std::string, std::string> SplitPage(std::string_view see) {
  const size_t open = see.find('(');
  if (open == std::string_view::npos || see.back() != ')') return {};
  return {std::string(see.substr(0, open)),
          std::string(see.substr(open + 1, see.size() - open - 2))};
}

// The family a per-submodule variable belongs to ("NEURON_RT_LOG_LEVEL_"),
// or "" for any other variable.
std::string FamilyOf(const std::string& name) {
  for (const char* family : {"NEURON_RT_LOG_LEVEL_", "NEURON_RT_LOG_LOCATION_"}) {
    if (name.rfind(family, 0) == 0 && name.size() > std::string_view(family).size()) {
      return family;
    }
  }
  return "";
}

// Text for an mdoc line: backslashes escaped, no leading control character.
std::string Roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string RenderPage() {
  std::ostringstream p;
  p << ".\\\" Written from lib/config/variable_effects.cc and variable_table.cc;\n"
    << ".\\\" tests/config/effects_test.cc keeps them equal.\n"
    << ".Dd December 3, 2026\n.Dt NEURON-ENV 7\n.Os neuron-tools\n"
    << ".Sh NAME\n.Nm neuron-env\n"
    << ".Nd the Neuron Runtime environment variables and what each does on the simulated device\n"
    << ".Sh DESCRIPTION\n"
    << "The runtime reads these variables once, when it starts (nrt_init, or a tool's first\n"
    << "use of a core), with the types, defaults, validation and interactions of the\n"
    << "Neuron Runtime reference.\n"
    << "A malformed value is an error naming the variable, or, where the reference says\n"
    << "so, a warning that keeps the default.\n"
    << ".Ql neuron-ls --env\n"
    << "prints every value in effect, where it came from, and the mark below.\n"
    << ".Pp\n"
    << "Each entry gives the type and default, the reference's description, and what the\n"
    << "variable does here: marked\n.Sy simulated\n"
    << "where the simulated device does what the reference describes, or\n"
    << ".Sy hardware-only\n"
    << "where the effect needs a real device (the entry then says why, and what it would do).\n";
  std::string section;
  std::set<std::string> families_done;
  bool in_list = false;
  for (const VariableSpec& v : AllVariables()) {
    if (v.section != section) {
      if (in_list) p << ".El\n";
      section = v.section;
      p << ".Ss " << Roff(section) << "\n.Bl -tag -width Ds\n";
      in_list = true;
    }
    const std::string family = FamilyOf(v.name);
    const VariableEffect* e = EffectOf(v.name);
    if (e == nullptr) continue;  // EveryVariableHasAnEffect reports it
    const auto [page, number] = SplitPage(e->see);
    if (!family.empty()) {
      if (!families_done.insert(family).second) continue;
      p << ".It Ev " << family << " Ns Ar SUBMODULE\n"
        << "One variable per runtime submodule:\n";
      bool first = true;
      for (const VariableSpec& w : AllVariables()) {
        if (FamilyOf(w.name) != family) continue;
        p << (first ? ".Ev " : ", ") << w.name.substr(family.size());
        first = false;
      }
      p << " .\n";
    } else {
      p << ".It Ev " << v.name << "\n"
        << Roff(std::string(ValueTypeName(v.type)) + "; default " + v.default_text + ".") << "\n"
        << Roff(v.description) << "\n";
    }
    p << ".Pp\n.Sy " << EffectKindName(e->kind) << " :\n"
      << Roff(e->here) << "\nSee\n.Xr " << page << " " << number << " .\n";
  }
  if (in_list) p << ".El\n";
  p << ".Sh SEE ALSO\n.Xr neuron-ls 1 ,\n.Xr nrt 3\n";
  return p.str();
}

TEST(VariableEffects, EveryVariableHasAnEffect) {
  for (const VariableSpec& v : AllVariables()) {
    SCOPED_TRACE(v.name);
    const VariableEffect* e = EffectOf(v.name);
    ASSERT_NE(e, nullptr) << "add it to lib/config/variable_effects.cc";
    EXPECT_FALSE(e->here.empty());
    EXPECT_LE(e->here.size(), 160u) << "one line in neuron-ls --env --json and the page";
    EXPECT_EQ(e->here.back(), '.');
    const auto [page, number] = SplitPage(e->see);
    ASSERT_FALSE(page.empty()) << "'see' is not name(N): " << e->see;
    EXPECT_TRUE(fs::exists(RepoRoot() / "man" / (page + "." + number))) << e->see;
  }
  EXPECT_EQ(EffectOf("NEURON_NO_SUCH_VARIABLE"), nullptr);
  EXPECT_EQ(EffectOf("NEURON_RT_LOG_LEVEL_"), EffectOf("NEURON_RT_LOG_LEVEL_NRT"));
}

TEST(VariableEffects, ManPageIsWhatTheTableRenders) {
  const fs::path page = RepoRoot() / "man" / "neuron-env.7";
  std::ifstream in(page);
  ASSERT_TRUE(in) << "cannot read " << page;
  std::stringstream have;
  have << in.rdbuf();
  const std::string want = RenderPage();
  if (have.str() != want) {
    const fs::path expected = fs::path(testing::ToolDir()) / "neuron-env.7.expected";
    std::ofstream(expected) << want;
    FAIL() << page << " differs from the effects table; the page it should be is "
           << expected << " (copy it over if the table is right)";
  }
}

}  // namespace
}  // namespace neuron::config
