/* Debian's protobuf, Abseil and zstd archives are built as PIE code, which
 * reads the libc variable `stderr` PC-relative, as if it were copied into
 * the executable. In a shared object it cannot be: libnrt defines its own
 * hidden `stderr`, pointing at the same stream as the C library's. Not
 * <stdio.h>: it declares stderr with a type and macro of its own. */
#define _GNU_SOURCE
#include <dlfcn.h>

struct _IO_FILE;
extern struct _IO_FILE _IO_2_1_stderr_;  /* what libc's stderr starts as */

__attribute__((visibility("hidden"))) struct _IO_FILE *stderr = &_IO_2_1_stderr_;

/* A program may have pointed its stderr elsewhere before loading us. */
__attribute__((constructor(101))) static void follow_program_stderr(void) {
  struct _IO_FILE **program_stderr = (struct _IO_FILE **)dlsym(RTLD_DEFAULT, "stderr");
  if (program_stderr != 0 && program_stderr != &stderr) stderr = *program_stderr;
}
