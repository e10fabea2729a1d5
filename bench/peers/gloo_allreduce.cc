// Gloo's allreduce (fp32 sum) over TCP for bench/allreduce.sh (loopback)
// and bench/allreduce_hosts.sh (a namespace cluster).
// Usage: [GLOO_HOSTNAME=ADDR] gloo_allreduce RANK SIZE STORE_DIR ITERS WARMUP BYTES...
// GLOO_HOSTNAME is the address this rank binds and is reached at (default
// 127.0.0.1); the file store needs a directory every rank sees.
// Rank 0 prints "BYTES AVG_US" per size (the slowest rank's time).
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: gloo_allreduce RANK SIZE STORE_DIR ITERS WARMUP BYTES...\n");
    return 2;
  }
  const int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  const int iters = std::atoi(argv[4]), warmup = std::atoi(argv[5]);
  gloo::transport::tcp::attr attr;
  const char* host = std::getenv("GLOO_HOSTNAME");
  attr.hostname = host != nullptr && *host != '\0' ? host : "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(argv[3]);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);
  for (int a = 6; a < argc; ++a) {
    const size_t bytes = std::strtoull(argv[a], nullptr, 10);
    const size_t n = std::max<size_t>(1, bytes / sizeof(float));
    std::vector<float> in(n, 0.0f), out(n, 0.0f), times(1), worst(1);
    auto run = [&] {
      gloo::AllreduceOptions opts(context);
      opts.setInput(in.data(), n);
      opts.setOutput(out.data(), n);
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      gloo::allreduce(opts);
    };
    for (int i = 0; i < warmup; ++i) run();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) run();
    times[0] = static_cast<float>(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        iters);
    // The slower rank's time: a max-allreduce of one value.
    gloo::AllreduceOptions m(context);
    m.setInput(times.data(), 1);
    m.setOutput(worst.data(), 1);
    m.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::max<float>));
    gloo::allreduce(m);
    if (rank == 0) std::printf("%zu %.3f\n", bytes, worst[0]);
  }
  return 0;
}
