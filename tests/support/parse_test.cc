#include "lib/support/parse.h"

#include <sys/resource.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "neuron/nrt_status.h"

namespace neuron {
namespace {

TEST(ParseBool, AcceptsZeroOneTrueFalseInAnyCase) {
  for (const char* t : {"1", "true", "TRUE", "True", "tRuE"}) {
    auto v = ParseBool(t);
    ASSERT_TRUE(v.ok()) << t;
    EXPECT_TRUE(*v) << t;
  }
  for (const char* t : {"0", "false", "FALSE", "False"}) {
    auto v = ParseBool(t);
    ASSERT_TRUE(v.ok()) << t;
    EXPECT_FALSE(*v) << t;
  }
}

TEST(ParseBool, RejectsOtherWordsAndSaysWhatIsAccepted) {
  for (const char* t : {"", "yes", "on", "2", "-1", " 1"}) {
    auto v = ParseBool(t);
    ASSERT_FALSE(v.ok()) << t;
    EXPECT_NE(v.status().message().find("0, 1, false, true"), std::string::npos);
  }
}

TEST(ParseUnsigned, ParsesAndChecksBounds) {
  EXPECT_EQ(*ParseUnsigned("0"), 0u);
  EXPECT_EQ(*ParseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseUnsigned("18446744073709551616").ok());
  EXPECT_FALSE(ParseUnsigned("-1").ok());
  EXPECT_FALSE(ParseUnsigned("12a").ok());
  EXPECT_FALSE(ParseUnsigned("").ok());
  EXPECT_FALSE(ParseUnsigned("64", 63).ok());
  EXPECT_EQ(*ParseUnsigned("63", 63), 63u);
}

TEST(ParseSigned, ParsesNegatives) {
  EXPECT_EQ(*ParseSigned("-1"), -1);
  EXPECT_EQ(*ParseSigned("1003"), 1003);
  EXPECT_EQ(*ParseSigned("-9223372036854775808"), INT64_MIN);
  EXPECT_FALSE(ParseSigned("--1").ok());
  EXPECT_FALSE(ParseSigned("+1").ok());
  EXPECT_FALSE(ParseSigned("x").ok());
}

TEST(ParseByteCount, UnitsAreBinary) {
  EXPECT_EQ(*ParseByteCount("4096"), 4096u);
  EXPECT_EQ(*ParseByteCount("64k"), 65536u);
  EXPECT_EQ(*ParseByteCount("2MiB"), 2u << 20);
  EXPECT_EQ(*ParseByteCount("2 MiB"), 2u << 20);
  EXPECT_EQ(*ParseByteCount("32MB"), 32u << 20);
  EXPECT_EQ(*ParseByteCount("1gb"), 1u << 30);
  EXPECT_FALSE(ParseByteCount("MiB").ok());
  EXPECT_FALSE(ParseByteCount("1 parsec").ok());
  EXPECT_FALSE(ParseByteCount("-5").ok());
  EXPECT_FALSE(ParseByteCount("99999999999999999999g").ok());
}

TEST(ParseRangeList, RangesListsAndMixes) {
  EXPECT_EQ(*ParseRangeList("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*ParseRangeList("0,2,4"), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(*ParseRangeList("4,0,2-3,2"), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_EQ(*ParseRangeList("7"), (std::vector<int>{7}));
  for (const char* bad : {"", "3-1", "a", "1,,2", "-1", "1-", "0-3,x"}) {
    EXPECT_FALSE(ParseRangeList(bad).ok()) << bad;
  }
}

// An env value of a few kilobytes repeating the widest range must not
// expand to gigabytes before duplicates are dropped.
TEST(ParseRangeList, RepeatedWideRangesStayBounded) {
  std::string text = "0-1048576";
  for (int i = 0; i < 999; ++i) text += ",0-1048576";
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  absl::StatusOr<std::vector<int>> values = ParseRangeList(text);
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->size(), 1048577u);
  EXPECT_EQ(values->back(), 1048576);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 << 10) << "KiB of peak memory grew";
  EXPECT_FALSE(ParseRangeList("0-1048577").ok());
}

TEST(FormatRangeList, RoundTrips) {
  EXPECT_EQ(FormatRangeList({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(FormatRangeList({}), "");
  EXPECT_EQ(*ParseRangeList(FormatRangeList({1, 2, 5})), (std::vector<int>{1, 2, 5}));
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(uint64_t{16} << 30), "16 GiB");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 29), "1.5 GiB");
}

TEST(NrtStatus, RealValuesAndNames) {
  EXPECT_EQ(NRT_TIMEOUT, 5);
  EXPECT_EQ(NRT_EXEC_COMPLETED_WITH_NUM_ERR, 1003);
  EXPECT_STREQ(nrt_get_status_name(NRT_TIMEOUT), "NRT_TIMEOUT");
  EXPECT_STREQ(nrt_get_status_as_str(NRT_TIMEOUT), "Timeout Exceeded");
  EXPECT_STREQ(nrt_get_status_as_str(NRT_RESOURCE), "Allocation Failure");
  NRT_STATUS s;
  ASSERT_EQ(nrt_parse_status("1003", &s), 0);
  EXPECT_EQ(s, NRT_EXEC_COMPLETED_WITH_NUM_ERR);
  ASSERT_EQ(nrt_parse_status("nrt_timeout", &s), 0);
  EXPECT_EQ(s, NRT_TIMEOUT);
  ASSERT_EQ(nrt_parse_status("EXEC_OOB", &s), 0);
  EXPECT_EQ(s, NRT_EXEC_OOB);
  EXPECT_EQ(nrt_parse_status("8", &s), -1);
  EXPECT_EQ(nrt_parse_status("bogus", &s), -1);
}

}  // namespace
}  // namespace neuron
