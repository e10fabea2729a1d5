/* What the C test programs share. Header-only and `static inline`, so a
 * program that does not use a helper gets no unused-function warning. */
#ifndef NRT_C_TEST_UTIL_H_
#define NRT_C_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>

/* The whole file, NUL-terminated (so text can be searched); NULL when it
 * cannot be read. *size: its length, without the NUL. Free with free(). */
static inline char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *data;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  data = malloc((size_t)n + 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data == NULL) return NULL;
  data[n] = '\0';
  if (size != NULL) *size = (size_t)n;
  return data;
}

/* NEFF `name` of the model directory the check passes as argv[1]; prints
 * why and returns NULL when it cannot be read. */
static inline char *read_model(const char *dir, const char *name, size_t *size) {
  char path[4096];
  char *data;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  data = read_file(path, size);
  if (data == NULL) perror(path);
  return data;
}

#endif /* NRT_C_TEST_UTIL_H_ */
