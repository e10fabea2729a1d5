// A child process that holds logical cores of a simulated device tree until
// it is reaped: what another tool's process looks like to the one under test.
#ifndef NEURON_TESTS_DEVICE_CORE_HOLDER_H_
#define NEURON_TESTS_DEVICE_CORE_HOLDER_H_

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "lib/device/instance_catalog.h"
#include "lib/device/logical_cores.h"

namespace neuron::testing {

// Forks a process that takes `cores` (logical, at `lnc`) of the tree at
// `root` for `instance`, naming itself `command`; returns once it holds them.
inline pid_t HoldCores(const std::string& root, const std::string& instance, std::vector<int> cores,
                       const std::string& command, int lnc) {
  const device::InstanceType& type = **device::FindInstanceType(instance);
  EXPECT_TRUE(device::SimDeviceTree::Open(root, type).ok());
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    device::CoreOwner owner = device::CurrentProcessOwner();
    owner.command = command;
    auto lease = device::AcquireCores(root, *device::LogicalCoreMap::Create(type, lnc), cores, owner);
    char c = lease.ok() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  EXPECT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  EXPECT_EQ(c, 'y');
  return pid;
}

// Ends a holder; its cores are free again.
inline void Reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

}  // namespace neuron::testing

#endif  // NEURON_TESTS_DEVICE_CORE_HOLDER_H_
