// Pytree paths compare as key sequences whatever their spelling.
#include "lib/tensorfile/key_path.h"

#include "gtest/gtest.h"

namespace neuron::tensorfile {
namespace {

TEST(KeyPath, SpellingsAgree) {
  const KeyPath want = {"args", "1", "0", "params", "layer_0", "w"};
  EXPECT_EQ(ParseKeyPath("args[1][0]['params']['layer_0']['w']"), want);
  EXPECT_EQ(ParseKeyPath(R"(args[1][0][\'params\'][\'layer_0\'][\'w\'])"), want);  // as HLO text escapes it
  EXPECT_EQ(ParseKeyPath(R"(args[1][0]["params"]["layer_0"]["w"])"), want);
  EXPECT_EQ(ParseKeyPath("args/1/0/params/layer_0/w"), want);
  EXPECT_EQ(ParseKeyPath("args.1.0.params.layer_0.w"), want);
  EXPECT_EQ(ParseKeyPath("args[1][0].params/layer_0['w']"), want);
}

TEST(KeyPath, QuotedKeysKeepSeparators) {
  EXPECT_EQ(ParseKeyPath("inputs['a.b/c']"), (KeyPath{"inputs", "a.b/c"}));
}

TEST(KeyPath, NotAPath) {
  EXPECT_FALSE(ParseKeyPath("jit(__call__)/jit(main)/dot_general").has_value());
  EXPECT_FALSE(ParseKeyPath("args[1").has_value());
  EXPECT_FALSE(ParseKeyPath("args['w'").has_value());
  EXPECT_FALSE(ParseKeyPath("args[x]").has_value());
  EXPECT_FALSE(ParseKeyPath("").has_value());
  EXPECT_FALSE(ParseKeyPath("a b").has_value());
}

TEST(KeyPath, Suffix) {
  const KeyPath path = {"args", "0", "params", "w"};
  EXPECT_TRUE(IsSuffix({"params", "w"}, path));
  EXPECT_TRUE(IsSuffix(path, path));
  EXPECT_FALSE(IsSuffix({"params"}, path));
  EXPECT_FALSE(IsSuffix({}, path));
  EXPECT_FALSE(IsSuffix({"x", "args", "0", "params", "w"}, path));
}

TEST(KeyPath, Format) {
  EXPECT_EQ(FormatKeyPath({"args", "1", "params", "w"}), "args[1]['params']['w']");
  EXPECT_EQ(FormatKeyPath({}), "");
}

}  // namespace
}  // namespace neuron::tensorfile
