#include "lib/plot/svg_render.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/plot/colors.h"
#include "lib/plot/plplot_library.h"
#include "lib/support/atomic_file.h"
#include "lib/support/cli.h"

namespace neuron::plot {
namespace {

// While PLplot draws, stdout and stderr point at /dev/null: its drivers
// print warnings and notes of their own, and a tool's stdout carries its
// results (a table, JSON) that must stay parseable.
struct QuietStdio {
  int saved_out = -1, saved_err = -1;

  void Begin() {
    std::fflush(stdout);
    std::fflush(stderr);
    const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return;  // then PLplot's chatter shows; nothing worse
    saved_out = dup(STDOUT_FILENO);
    saved_err = dup(STDERR_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    close(null_fd);
  }
  void End() {
    // Whatever PLplot left in stdio's buffers goes to /dev/null too.
    std::fflush(stdout);
    std::fflush(stderr);
    for (auto [saved, fd] : {std::pair{saved_out, STDOUT_FILENO}, {saved_err, STDERR_FILENO}}) {
      if (saved < 0) continue;
      dup2(saved, fd);
      close(saved);
    }
    saved_out = saved_err = -1;
  }
};

// PLplot's callbacks are plain function pointers: the picture being drawn.
// Leaving its scope (an exception from a draw function included) gives the
// tool its stdout and stderr back.
struct Drawing {
  Drawer drawer;
  QuietStdio quiet;
  std::string first_error;  // PLplot's first complaint (plabort)
  ~Drawing();
};
Drawing* current = nullptr;

Drawing::~Drawing() {
  quiet.End();
  current = nullptr;
}

// plabort: a call with bad arguments was skipped. The picture is then
// wrong, so the first message becomes the error.
void OnAbort(PLCHAR_VECTOR message) {
  if (current != nullptr && current->first_error.empty()) current->first_error = message;
}

// plexit: PLplot cannot go on and would exit after printing its chatter;
// print one error line of ours and exit instead (no file was written yet).
int OnExit(PLCHAR_VECTOR message) {
  if (current != nullptr) {
    current->quiet.End();
    PrintError(current->drawer.tool,
               absl::StrCat(current->drawer.what, ": cannot draw the picture: PLplot: ", message));
  }
  _exit(kExitFailure);
}

bool HasSvgDevice() {
  constexpr int kMax = 64;
  const char* menus[kMax];
  const char* names[kMax];
  const char** m = menus;
  const char** d = names;
  int n = kMax;
  Pl().plgDevs(&m, &d, &n);
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(names[i], "svg") == 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> RenderSvg(const Drawer& drawer, PageSize size,
                                      const std::function<void()>& draw) {
  if (absl::StatusOr<const PlplotLibrary*> pl = LoadPlplot(); !pl.ok()) {
    return absl::Status(pl.status().code(), absl::StrCat(drawer.what, ": cannot draw the picture: ",
                                                         pl.status().message()));
  }
  Drawing drawing;
  drawing.drawer = drawer;
  current = &drawing;
  Pl().plsexit(OnExit);
  Pl().plsabort(OnAbort);
  drawing.quiet.Begin();
  // Without its svg driver PLplot would prompt on stdin for another device.
  if (!HasSvgDevice()) {
    return absl::FailedPreconditionError(
        absl::StrCat(drawer.what, ": cannot draw the picture: PLplot has no svg device (is "
                                  "libplplot17 installed?)"));
  }
  char* bytes = nullptr;
  size_t length = 0;
  FILE* memory = open_memstream(&bytes, &length);
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat(drawer.what, ": cannot draw the picture: out of memory"));
  }
  Pl().plsdev("svg");
  Pl().plsfile(memory);
  Pl().plspage(0, 0, size.width_pt, size.height_pt, 0, 0);
  InstallPalette();
  Pl().plinit();
  Pl().pladv(0);
  draw();
  // The svg driver closes the stream at plend, which settles bytes/length.
  Pl().plend();
  std::string svg(bytes != nullptr ? bytes : "", length);
  std::free(bytes);
  if (!drawing.first_error.empty()) {
    return absl::InternalError(
        absl::StrCat(drawer.what, ": cannot draw the picture: PLplot: ", drawing.first_error));
  }
  if (svg.find("</svg>") == std::string::npos) {
    return absl::InternalError(
        absl::StrCat(drawer.what, ": cannot draw the picture: PLplot wrote no complete SVG"));
  }
  return svg;
}

absl::Status WriteSvg(const std::string& path, std::string_view svg) {
  return WriteFileAtomically(path, svg);
}

}  // namespace neuron::plot
