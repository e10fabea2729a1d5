/* Stands in for the Neuron driver under neuron-ls (LD_PRELOAD): opening
 * /dev/neuronN gives a descriptor of /dev/null, and the ioctls neuron-ls
 * makes on it answer from the environment:
 *   FAKE_NEURON_BDFS  "dddd:bb:ss.f ..." one PCI address per device
 *   FAKE_NEURON_APPS  "device:pid:lockmap ..." processes attached
 * Any other ioctl on such a descriptor fails with ENOTTY, as on a node that
 * is not the driver's. Layouts as in the driver's neuron_ioctl.h. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define IOCTL_BDF_EXT 0x80084e6aUL      /* _IOR('N', 106, void*) */
#define IOCTL_GET_ALL_APPS 0x80084e07UL /* _IOR('N', 7, void*) */

struct bdf_ext { uint32_t nd_index, domain, bus, slot_func_pad; };
struct app_info { int32_t pid; uint8_t nc_lock_map; uint8_t uuid[4][32]; size_t host, dev; };
struct apps_info { uint16_t flags; uint32_t capacity; uint32_t size; struct app_info apps[]; };

static int device_of_fd[4096]; /* device index + 1; 0: not ours */

static int fake_open(const char *path, int flags) {
  int device;
  if (sscanf(path, "/dev/neuron%d", &device) != 1) return -2;
  int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
  int fd = real_open("/dev/null", O_RDWR | (flags & O_CLOEXEC));
  if (fd >= 0 && fd < 4096) device_of_fd[fd] = device + 1;
  return fd;
}

int open(const char *path, int flags, ...) {
  int fd = fake_open(path, flags);
  if (fd != -2) return fd;
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_arg(ap, mode_t);
  va_end(ap);
  int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
  return real_open(path, flags, mode);
}

int close(int fd) {
  int (*real_close)(int) = dlsym(RTLD_NEXT, "close");
  if (fd >= 0 && fd < 4096) device_of_fd[fd] = 0;
  return real_close(fd);
}

/* The n-th word of an environment variable, or NULL. */
static const char *word(const char *var, int n, char *buf, size_t size) {
  const char *s = getenv(var);
  if (s == NULL) return NULL;
  for (int i = 0;; ++i) {
    s += strspn(s, " ");
    size_t len = strcspn(s, " ");
    if (len == 0) return NULL;
    if (i == n) {
      if (len >= size) return NULL;
      memcpy(buf, s, len);
      buf[len] = '\0';
      return buf;
    }
    s += len;
  }
}

int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (fd < 0 || fd >= 4096 || device_of_fd[fd] == 0) {
    int (*real_ioctl)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
    return real_ioctl(fd, request, arg);
  }
  const int device = device_of_fd[fd] - 1;
  char buf[64];
  if (request == IOCTL_BDF_EXT) {
    struct bdf_ext *b = arg;
    unsigned domain, bus, slot, func;
    if (!word("FAKE_NEURON_BDFS", device + (int)b->nd_index, buf, sizeof buf) ||
        sscanf(buf, "%x:%x:%x.%x", &domain, &bus, &slot, &func) != 4) {
      errno = EINVAL;
      return -1;
    }
    b->domain = domain;
    b->bus = bus;
    b->slot_func_pad = slot | (func << 8);
    return 0;
  }
  if (request == IOCTL_GET_ALL_APPS) {
    struct apps_info *a = arg;
    uint32_t n = 0;
    for (int i = 0; word("FAKE_NEURON_APPS", i, buf, sizeof buf) && n < a->capacity; ++i) {
      int d, pid, map;
      if (sscanf(buf, "%d:%d:%d", &d, &pid, &map) != 3 || d != device) continue;
      memset(&a->apps[n], 0, sizeof a->apps[n]);
      a->apps[n].pid = pid;
      a->apps[n].nc_lock_map = (uint8_t)map;
      ++n;
    }
    a->size = n;
    return 0;
  }
  errno = ENOTTY;
  return -1;
}
