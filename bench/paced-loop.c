/* The pacing peer for bench/end-to-end.sh: a bare C loop that issues one 4 KiB pread
 * at a random aligned offset of FILE every GAP_NS nanoseconds, spinning on
 * CLOCK_MONOTONIC to each deadline, and prints the issue-time error (how late each
 * pread started) as naslab's pacing_lag does. It does nothing else, so its tail is
 * what the machine itself (scheduler, interrupts, the host) costs a paced thread.
 *
 * usage: paced-loop FILE GAP_NS OPS
 * build: cc -O2 -o paced-loop bench/paced-loop.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE GAP_NS OPS\n", argv[0]);
    return 2;
  }
  uint64_t gap = strtoull(argv[2], NULL, 10);
  size_t ops = strtoull(argv[3], NULL, 10);
  int fd = open(argv[1], O_RDONLY);
  off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
  if (fd < 0 || size < 4096 || ops == 0) {
    perror(argv[1]);
    return 1;
  }
  char *buf = aligned_alloc(4096, 4096);
  uint64_t *late = calloc(ops, sizeof *late);
  uint64_t state = 1, blocks = (uint64_t)size / 4096;
  uint64_t start = now_ns();
  for (size_t i = 0; i < ops; i++) {
    uint64_t due = start + i * gap, t;
    while ((t = now_ns()) < due)
      ;
    late[i] = t - due;
    state = state * 6364136223846793005u + 1442695040888963407u;
    if (pread(fd, buf, 4096, (off_t)((state >> 33) % blocks) * 4096) != 4096) {
      perror("pread");
      return 1;
    }
  }
  qsort(late, ops, sizeof *late, by_value);
  printf("p50 %.1f us, p99 %.1f us, max %.1f us\n", late[ops / 2] / 1e3,
         late[ops * 99 / 100] / 1e3, late[ops - 1] / 1e3);
  return 0;
}
