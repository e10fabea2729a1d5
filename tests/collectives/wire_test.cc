// The set-up messages' parsers: every value a peer sends that sizes,
// indexes or offsets something is refused when out of bounds, with a
// message that names it.
#include "lib/collectives/wire.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "lib/collectives/comm_impl.h"

namespace neuron::collectives::wire {
namespace {

template <typename T>
std::string Bytes(const T& t) {
  return std::string(reinterpret_cast<const char*>(&t), sizeof(T));
}

BootHello GoodHello(uint32_t rank, uint32_t world) {
  BootHello h{};
  h.magic = kBootHelloMagic;
  h.rank = rank;
  h.world = world;
  h.data_port = 1234;
  h.arena_bytes = 4096;
  return h;
}

void ExpectRefused(const absl::Status& st, const std::string& words) {
  EXPECT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find(words), std::string::npos) << st;
}

TEST(Wire, BootHelloIsCheckedBeforeUse) {
  EXPECT_TRUE(ParseBootHello(Bytes(GoodHello(1, 2)), 2).ok());
  ExpectRefused(ParseBootHello("GET / HTTP/1.1\r\n", 2).status(), "bytes");
  BootHello h = GoodHello(1, 2);
  h.magic = 0x20544547;
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "not a rank's hello");
  h = GoodHello(1, 3);
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "says the world has 3");
  h = GoodHello(7, 2);
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "rank numbered 7");
  h = GoodHello(1, 2);
  h.arena_bytes = ~uint64_t{0} & ~uint64_t{4095};  // would wrap the segment's size
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "arena");
  h.arena_bytes = 100;  // not whole pages
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "arena");
  h = GoodHello(1, 2);
  h.data_port = 70000;
  ExpectRefused(ParseBootHello(Bytes(h), 2).status(), "port 70000");
}

TEST(Wire, RankTableEntriesMustBeTheirRanks) {
  RankTable t;
  t.nonce = 42;
  t.ranks = {GoodHello(0, 2), GoodHello(1, 2)};
  auto back = ParseRankTable(SerializeRankTable(t), 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->nonce, 42u);
  EXPECT_EQ(back->ranks[1].rank, 1u);
  ExpectRefused(ParseRankTable(SerializeRankTable(t), 3).status(), "world of 3");
  t.ranks[1].rank = 0;  // entry 1 claims rank 0: would index as rank 0
  ExpectRefused(ParseRankTable(SerializeRankTable(t), 2).status(), "entry 1 is rank 0");
  t.ranks[1] = GoodHello(1, 2);
  t.ranks[1].arena_bytes = kMaxArenaBytes + 4096;
  ExpectRefused(ParseRankTable(SerializeRankTable(t), 2).status(), "entry 1");
  ExpectRefused(ParseRankTable("", 0).status(), "world of 0");
}

TEST(Wire, MeshHelloComesFromAHigherRankOfTheWorld) {
  MeshHello h{};
  h.magic = kMeshHelloMagic;
  h.rank = 3;
  h.channel = 1;
  EXPECT_TRUE(ParseMeshHello(Bytes(h), 1, 4, 1).ok());
  ExpectRefused(ParseMeshHello(Bytes(h), 1, 4, 0).status(), "channel 1");
  ExpectRefused(ParseMeshHello(Bytes(h), 3, 4, 1).status(), "from rank 3 to rank 3");
  h.rank = 4;
  ExpectRefused(ParseMeshHello(Bytes(h), 1, 4, 1).status(), "from rank 4");
  h.rank = -1;
  ExpectRefused(ParseMeshHello(Bytes(h), 1, 4, 1).status(), "from rank -1");
}

TEST(Wire, EndpointBlobs) {
  EndpointBlob b;
  b.fabric = true;
  b.provider = "tcp;ofi_rxm";
  b.name = std::string(16, '\x7f');
  auto back = ParseEndpointBlob(SerializeEndpointBlob(b));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->provider, "tcp;ofi_rxm");
  EXPECT_EQ(back->name.size(), 16u);
  auto tcp = ParseEndpointBlob("Tno provider");
  ASSERT_TRUE(tcp.ok());
  EXPECT_FALSE(tcp->fabric);
  EXPECT_EQ(tcp->why, "no provider");
  ExpectRefused(ParseEndpointBlob("").status(), "neither");
  ExpectRefused(ParseEndpointBlob("Fefa").status(), "without a provider");
  ExpectRefused(ParseEndpointBlob(std::string("Fefa\0", 5)).status(), "name of 0 bytes");
  ExpectRefused(ParseEndpointBlob(std::string("Fefa\0", 5) + std::string(300, 'x')).status(),
                "name of 300 bytes");
}

TEST(Wire, PointToPointHeaders) {
  P2pHello h{};
  h.magic = htonl(kP2pHelloMagic);
  h.dst_lnc = htonl(2);
  h.src_lnc = htonl(1);
  EXPECT_TRUE(ParseP2pHello(Bytes(h), 2).ok());
  ExpectRefused(ParseP2pHello(Bytes(h), 3).status(), "for lnc 2 reached lnc 3");
  h.src_lnc = htonl(1u << 20);
  ExpectRefused(ParseP2pHello(Bytes(h), 2).status(), "from lnc");
  P2pDataHeader d{kP2pDataMagic, 5, 64};
  EXPECT_TRUE(ParseP2pDataHeader(Bytes(d), 5, 64).ok());
  ExpectRefused(ParseP2pDataHeader(Bytes(d), 5, 16).status(), "64-byte tensor to a 16-byte");
  ExpectRefused(ParseP2pDataHeader(Bytes(d), 6, 64).status(), "message 5 arrived where message 6");
  d.magic = 0;
  ExpectRefused(ParseP2pDataHeader(Bytes(d), 5, 64).status(), "not a message header");
}

TEST(Wire, TcpFramesCarryTheirNumberAndLength) {
  TcpFrame f{kTcpFrameMagic, 3, 100};
  EXPECT_TRUE(ParseTcpFrame(Bytes(f), 3, 100).ok());
  ExpectRefused(ParseTcpFrame(Bytes(f), 4, 100).status(), "transfer 3 arrived where transfer 4");
  ExpectRefused(ParseTcpFrame(Bytes(f), 3, 99).status(), "100 bytes where 99");
  ExpectRefused(ParseTcpFrame("late bytes", 3, 100).status(), "bytes, not 16");
}

TEST(Wire, ZeroCopyOffsetsStayInTheirArena) {
  EXPECT_TRUE(InArena(0, 4096, 4096));
  EXPECT_TRUE(InArena(4096, 0, 4096));
  EXPECT_FALSE(InArena(1, 4096, 4096));
  EXPECT_FALSE(InArena(8192, 0, 4096));
  EXPECT_FALSE(InArena(~uint64_t{0} - 10, 20, 4096));  // would wrap
  EXPECT_FALSE(InArena(10, ~uint64_t{0} - 5, 4096));
}

TEST(Wire, ChallengeAndVerdict) {
  Challenge c{kChallengeMagic, kProtocolVersion, 0, 0, {}};
  EXPECT_TRUE(ParseChallenge(Bytes(c)).ok());
  c.version = 1;
  ExpectRefused(ParseChallenge(Bytes(c)).status(), "version 1");
  Verdict v{kVerdictMagic, 9, {}};
  ExpectRefused(ParseVerdict(Bytes(v)).status(), "code 9");
}

}  // namespace
}  // namespace neuron::collectives::wire
