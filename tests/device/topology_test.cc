// Device links, CPU affinity and the topology drawing.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "lib/device/topology.h"
#include "lib/support/parse.h"

namespace neuron::device {
namespace {

const InstanceType& Instance(const char* name) { return **FindInstanceType(name); }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(TopologyTest, Trn2TorusMatchesTheRealNeuronLsRows) {
  // Rows of neuron-ls on a trn2.48xlarge (Neuron LS user guide).
  const InstanceType& t = Instance("trn2.48xlarge");
  EXPECT_EQ(ConnectedDevices(t, 0), (std::vector<int>{12, 3, 4, 1}));
  EXPECT_EQ(ConnectedDevices(t, 4), (std::vector<int>{0, 7, 8, 5}));
  EXPECT_EQ(ConnectedDevices(t, 10), (std::vector<int>{6, 9, 14, 11}));
  EXPECT_EQ(ConnectedDevices(t, 15), (std::vector<int>{11, 14, 3, 12}));
  EXPECT_EQ(FormatDeviceList(ConnectedDevices(t, 0)), "12, 3, 4, 1");
}

TEST(TopologyTest, Trn1_32xlargeIsTheSameTorus) {
  const InstanceType& t = Instance("trn1.32xlarge");
  EXPECT_EQ(ConnectedDevices(t, 13), (std::vector<int>{9, 12, 1, 14}));
}

TEST(TopologyTest, LinksAreSymmetricAndInRange) {
  for (const InstanceType& t : AllInstanceTypes()) {
    SCOPED_TRACE(t.name);
    for (int d = 0; d < t.devices; ++d) {
      for (int peer : ConnectedDevices(t, d)) {
        ASSERT_GE(peer, 0);
        ASSERT_LT(peer, t.devices);
        EXPECT_NE(peer, d);
        std::vector<int> back = ConnectedDevices(t, peer);
        EXPECT_NE(std::find(back.begin(), back.end(), d), back.end()) << d << "->" << peer;
      }
    }
  }
}

TEST(TopologyTest, Inf2IsARing) {
  const InstanceType& t = Instance("inf2.48xlarge");
  EXPECT_EQ(ConnectedDevices(t, 0), (std::vector<int>{11, 1}));
  EXPECT_EQ(ConnectedDevices(t, 11), (std::vector<int>{10, 0}));
  EXPECT_TRUE(ConnectedDevices(Instance("inf2.xlarge"), 0).empty());
  EXPECT_TRUE(ConnectedDevices(Instance("trn1.2xlarge"), 0).empty());
  EXPECT_TRUE(ConnectedDevices(t, 12).empty()) << "out of range device";
}

TEST(TopologyTest, NumaSplitOfATwoSocketHost) {
  // A 192-vCPU two-socket host, as a trn2.48xlarge reports it.
  EXPECT_EQ(FormatRangeList(CpusOfNumaNode(0, 2, 192)), "0-47,96-143");
  EXPECT_EQ(FormatRangeList(CpusOfNumaNode(1, 2, 192)), "48-95,144-191");
  EXPECT_EQ(FormatRangeList(CpusOfNumaNode(0, 1, 8)), "0-7");
  EXPECT_EQ(FormatRangeList(CpusOfNumaNode(-1, 1, 4)), "0-3");
}

TEST(TopologyTest, NumaNodesPartitionTheHostCpus) {
  for (int host : {1, 2, 3, 4, 7, 8, 64, 192}) {
    for (int nodes : {1, 2, 4}) {
      SCOPED_TRACE(absl::StrFormat("host %d nodes %d", host, nodes));
      std::multiset<int> seen;
      for (int n = 0; n < nodes; ++n) {
        std::vector<int> cpus = CpusOfNumaNode(n, nodes, host);
        EXPECT_FALSE(cpus.empty());
        for (int c : cpus) {
          EXPECT_GE(c, 0);
          EXPECT_LT(c, host);
        }
        seen.insert(cpus.begin(), cpus.end());
      }
      if (host >= nodes) {
        EXPECT_EQ(seen.size(), static_cast<size_t>(host));  // each CPU exactly once
        EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), static_cast<size_t>(host));
      }
    }
  }
}

TEST(TopologyTest, DeviceAffinityFollowsItsNumaNode) {
  const InstanceType& t = Instance("trn2.48xlarge");
  EXPECT_EQ(FormatRangeList(DeviceCpuAffinity(t, 0, 192)), "48-95,144-191");  // node 1
  EXPECT_EQ(FormatRangeList(DeviceCpuAffinity(t, 4, 192)), "0-47,96-143");    // node 0
}

std::vector<std::vector<int>> Links(const InstanceType& t) {
  std::vector<std::vector<int>> out;
  for (int d = 0; d < t.devices; ++d) out.push_back(ConnectedDevices(t, d));
  return out;
}

TEST(TopologyTest, TorusIsDrawnAsAGrid) {
  std::string s = DrawTopology(Links(Instance("trn2.48xlarge")));
  EXPECT_NE(s.find("Neuron Device Topology"), std::string::npos);
  for (int d = 0; d < 16; ++d) {
    EXPECT_EQ(Count(s, absl::StrFormat("[%2d ]", d)), 1u) << d << "\n" << s;
  }
  // One line of boxes per torus row, each with wrap-around ends.
  EXPECT_EQ(Count(s, "*––►["), 4u) << s;
  EXPECT_NE(s.find("[ 0 ]◄––►[ 1 ]◄––►[ 2 ]◄––►[ 3 ]◄––*"), std::string::npos) << s;
  EXPECT_NE(s.find("Wrap-around"), std::string::npos);
}

TEST(TopologyTest, RingIsDrawnAsOneRow) {
  std::string s = DrawTopology(Links(Instance("inf2.24xlarge")));
  EXPECT_NE(s.find("*––►[ 0 ]◄––►[ 1 ]◄––►[ 2 ]◄––►[ 3 ]◄––►[ 4 ]◄––►[ 5 ]◄––*"),
            std::string::npos)
      << s;
}

TEST(TopologyTest, SingleDeviceSaysSo) {
  std::string s = DrawTopology(Links(Instance("trn1.2xlarge")));
  EXPECT_NE(s.find("single device"), std::string::npos) << s;
  EXPECT_NE(DrawTopology({}).find("no Neuron devices"), std::string::npos);
}

TEST(TopologyTest, IrregularLinksFallBackToAList) {
  std::string s = DrawTopology({{1}, {0, 2}, {1}});
  EXPECT_NE(s.find("[ 1 ] ◄––► 0, 2"), std::string::npos) << s;
}

}  // namespace
}  // namespace neuron::device
