// See include/fault_shim.h. Each wrapper looks up the C library's own function once
// (dlsym RTLD_NEXT), counts the call when the descriptor's file matches, and at the chosen
// call returns the failure instead of calling through.
#define _GNU_SOURCE
#include "fault_shim.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <pthread.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef int (*sync_fn)(int);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_fn)(const char *, int, ...);
typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);

enum { KIND_NONE, KIND_WRITE, KIND_SYNC };
enum { RESULT_EIO, RESULT_ENOSPC, RESULT_SHORT };

static int configured;  // 0: not read yet; 1: read
static int fault_kind = KIND_NONE;
static long fault_call;
static int fault_result;
static const char *fault_path;
static const char *fault_log;
static long counts[3];
static int record_fd = -1;  // EG_RECORD's file, opened on first use
static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

int eventgraph_fault_shim_loaded(void) { return 1; }

static void configure(void) {
  if (__atomic_load_n(&configured, __ATOMIC_ACQUIRE)) return;
  const char *spec = getenv("EG_FAULT");
  if (spec) {
    char kind[16] = {0}, result[16] = {0};
    long n = 0;
    if (sscanf(spec, "%15[a-z]:%ld:%15[A-Z]", kind, &n, result) == 3 && n > 0) {
      fault_kind = strcmp(kind, "write") == 0 ? KIND_WRITE : strcmp(kind, "sync") == 0 ? KIND_SYNC : KIND_NONE;
      fault_call = n;
      fault_result = strcmp(result, "ENOSPC") == 0 ? RESULT_ENOSPC : strcmp(result, "SHORT") == 0 ? RESULT_SHORT : RESULT_EIO;
    }
  }
  fault_path = getenv("EG_FAULT_PATH");
  fault_log = getenv("EG_FAULT_LOG");
  __atomic_store_n(&configured, 1, __ATOMIC_RELEASE);
}

// Whether this call on `fd` is the one to fail; `path` receives the file's name.
static int strikes(int fd, int kind, char *path, size_t size) {
  configure();
  if (fault_kind != kind && !getenv("EG_FAULT_COUNTS")) return 0;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, size - 1);
  if (n < 0) return 0;
  path[n] = 0;
  if (fault_path && !strstr(path, fault_path)) return 0;
  long call = __atomic_add_fetch(&counts[kind], 1, __ATOMIC_SEQ_CST);
  if (fault_kind != kind || call != fault_call) return 0;
  if (fault_log) {
    int saved = errno;
    FILE *f = fopen(fault_log, "a");
    if (f) {
      fprintf(f, "%s %ld %s\n", kind == KIND_WRITE ? "write" : "sync", call, path);
      fclose(f);
    }
    errno = saved;
  }
  return 1;
}

// With EG_FAULT_COUNTS=FILE, the calls of each kind on matching files are written there at
// exit ("write N" and "sync N"), so that a test knows how many there are to fail.
__attribute__((destructor)) static void write_counts(void) {
  const char *file = getenv("EG_FAULT_COUNTS");
  if (!file) return;
  FILE *f = fopen(file, "w");
  if (!f) return;
  fprintf(f, "write %ld\nsync %ld\n", counts[KIND_WRITE], counts[KIND_SYNC]);
  fclose(f);
}

// Recording (EG_RECORD=FILE): every write to a matching file, its offset and bytes, every
// sync of one, and every line written to standard output, in the order they happened:
//   "W <offset> <length> <path>\n" followed by the <length> bytes
//   "D\n" after a write through an O_DSYNC descriptor: that write is durable by itself
//   "S <path>\n" a sync: every write of the file before it is durable
//   "O <length>\n" followed by the <length> bytes written to standard output
//   "C <path>\n" a file made by an open with O_CREAT (it did not exist before)
//   "R\n<from>\n<to>\n" a rename
// (a sync of a directory is an "S" of the directory: its entries made so far are durable)
// so that a test can rebuild each state a power cut could leave (Docs/reliability.md).
static void record_raw(const void *bytes, size_t length) {
  static write_fn real;
  if (!real) real = (write_fn)dlsym(RTLD_NEXT, "write");
  const char *p = bytes;
  while (length > 0) {
    ssize_t n = real(record_fd, p, length);
    if (n <= 0) return;
    p += n;
    length -= (size_t)n;
  }
}

static int recording(void) {
  const char *file = getenv("EG_RECORD");
  if (!file) return 0;
  if (record_fd < 0) {
    pthread_mutex_lock(&record_lock);
    // The C library's own open: this file's `open` would come back here.
    open_fn real = (open_fn)dlsym(RTLD_NEXT, "open");
    if (record_fd < 0) record_fd = real(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    pthread_mutex_unlock(&record_lock);
  }
  return record_fd >= 0;
}

// The matching file `fd` names, in `path`; 0 when it does not match.
static int matching(int fd, char *path, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, size - 1);
  if (n < 0) return 0;
  path[n] = 0;
  return !fault_path || strstr(path, fault_path) != NULL;
}

static void record_write(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
  configure();
  if (!recording()) return;
  char path[4096];
  size_t length = 0;
  for (int i = 0; i < iovcnt; i++) length += iov[i].iov_len;
  char header[4200];
  pthread_mutex_lock(&record_lock);
  if (fd == 1) {
    int n = snprintf(header, sizeof header, "O %zu\n", length);
    record_raw(header, (size_t)n);
    for (int i = 0; i < iovcnt; i++) record_raw(iov[i].iov_base, iov[i].iov_len);
  } else if (matching(fd, path, sizeof path)) {
    int n = snprintf(header, sizeof header, "W %lld %zu %s\n", (long long)offset, length, path);
    record_raw(header, (size_t)n);
    for (int i = 0; i < iovcnt; i++) record_raw(iov[i].iov_base, iov[i].iov_len);
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & (O_DSYNC | O_SYNC))) record_raw("D\n", 2);
  }
  pthread_mutex_unlock(&record_lock);
}

// Records "<letter> <path>" for the file `fd` names, when it matches.
static void record_file(char letter, int fd) {
  configure();
  if (fd < 0 || !recording()) return;
  char path[4096];
  pthread_mutex_lock(&record_lock);
  if (matching(fd, path, sizeof path)) {
    char header[4200];
    int n = snprintf(header, sizeof header, "%c %s\n", letter, path);
    record_raw(header, (size_t)n);
  }
  pthread_mutex_unlock(&record_lock);
}

static void record_sync(int fd) { record_file('S', fd); }

// Records the first `written` bytes of a vector write.
static void record_written(int fd, const struct iovec *iov, int iovcnt, size_t written, off_t offset) {
  struct iovec parts[64];
  int count = 0;
  for (int i = 0; i < iovcnt && count < 64 && written > 0; i++) {
    size_t take = iov[i].iov_len < written ? iov[i].iov_len : written;
    parts[count].iov_base = iov[i].iov_base;
    parts[count].iov_len = take;
    written -= take;
    count++;
  }
  record_write(fd, parts, count, offset);
}

static ssize_t fail(void) {
  errno = fault_result == RESULT_ENOSPC ? ENOSPC : EIO;
  return -1;
}


// The C library's own `name`, looked up once.
#define REAL(name, type) \
  static type real_##name; \
  if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buf, size_t count) {
  REAL(write, write_fn);
  char path[4096];
  if (strikes(fd, KIND_WRITE, path, sizeof path)) {
    if (fault_result == RESULT_SHORT && count > 1) return real_write(fd, buf, count / 2);
    return fail();
  }
  off_t at = fd == 1 ? 0 : lseek(fd, 0, SEEK_CUR);
  ssize_t n = real_write(fd, buf, count);
  if (n > 0) {
    struct iovec v = {(void *)buf, (size_t)n};
    record_write(fd, &v, 1, at);
  }
  return n;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  REAL(pwrite, pwrite_fn);
  char path[4096];
  if (strikes(fd, KIND_WRITE, path, sizeof path)) {
    if (fault_result == RESULT_SHORT && count > 1) return real_pwrite(fd, buf, count / 2, offset);
    return fail();
  }
  ssize_t n = real_pwrite(fd, buf, count, offset);
  if (n > 0) {
    struct iovec v = {(void *)buf, (size_t)n};
    record_write(fd, &v, 1, offset);
  }
  return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  REAL(pwrite64, pwrite_fn);
  char path[4096];
  if (strikes(fd, KIND_WRITE, path, sizeof path)) {
    if (fault_result == RESULT_SHORT && count > 1) return real_pwrite64(fd, buf, count / 2, offset);
    return fail();
  }
  ssize_t n = real_pwrite64(fd, buf, count, offset);
  if (n > 0) {
    struct iovec v = {(void *)buf, (size_t)n};
    record_write(fd, &v, 1, offset);
  }
  return n;
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
  REAL(writev, writev_fn);
  char path[4096];
  if (strikes(fd, KIND_WRITE, path, sizeof path)) {
    if (fault_result == RESULT_SHORT && iovcnt > 1) return real_writev(fd, iov, iovcnt / 2);
    return fail();
  }
  off_t at = lseek(fd, 0, SEEK_CUR);
  ssize_t n = real_writev(fd, iov, iovcnt);
  if (n > 0) record_written(fd, iov, iovcnt, (size_t)n, at);
  return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
  REAL(pwritev, pwritev_fn);
  char path[4096];
  if (strikes(fd, KIND_WRITE, path, sizeof path)) {
    if (fault_result == RESULT_SHORT && iovcnt > 1) return real_pwritev(fd, iov, iovcnt / 2, offset);
    return fail();
  }
  ssize_t n = real_pwritev(fd, iov, iovcnt, offset);
  if (n > 0) record_written(fd, iov, iovcnt, (size_t)n, offset);
  return n;
}

int fsync(int fd) {
  REAL(fsync, sync_fn);
  char path[4096];
  if (strikes(fd, KIND_SYNC, path, sizeof path)) return (int)fail();
  int rc = real_fsync(fd);
  if (rc == 0) record_sync(fd);
  return rc;
}

int fdatasync(int fd) {
  REAL(fdatasync, sync_fn);
  char path[4096];
  if (strikes(fd, KIND_SYNC, path, sizeof path)) return (int)fail();
  int rc = real_fdatasync(fd);
  if (rc == 0) record_sync(fd);
  return rc;
}

// Records a file `fd` names when the open that returned it made it.
static void record_created(int fd) { record_file('C', fd); }

// Whether `path` (relative to `dirfd`) names nothing yet.
static int absent(int dirfd, const char *path) {
  struct stat st;
  return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

static int mode_of(int flags, va_list args) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, int) : 0;
}

// Every open goes through the C library's openat (as its own open does), recording a file
// it makes.
static int open_recording(int dirfd, const char *path, int flags, int mode) {
  REAL(openat, openat_fn);
  int saved = errno;
  int made = (flags & O_CREAT) && recording() && absent(dirfd, path);
  errno = saved;
  int fd = real_openat(dirfd, path, flags, mode);
  if (made) record_created(fd);
  return fd;
}

int open(const char *path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  int mode = mode_of(flags, args);
  va_end(args);
  return open_recording(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  int mode = mode_of(flags, args);
  va_end(args);
  return open_recording(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  int mode = mode_of(flags, args);
  va_end(args);
  return open_recording(dirfd, path, flags, mode);
}

// Records a rename of absolute paths under EG_FAULT_PATH (the callers here use absolute
// paths; a relative one is recorded as given).
static void record_rename(const char *from, const char *to) {
  configure();
  if (!recording() || (fault_path && !strstr(to, fault_path) && !strstr(from, fault_path))) return;
  pthread_mutex_lock(&record_lock);
  record_raw("R\n", 2);
  record_raw(from, strlen(from));
  record_raw("\n", 1);
  record_raw(to, strlen(to));
  record_raw("\n", 1);
  pthread_mutex_unlock(&record_lock);
}

int rename(const char *from, const char *to) {
  REAL(rename, rename_fn);
  int rc = real_rename(from, to);
  if (rc == 0) record_rename(from, to);
  return rc;
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
  REAL(renameat, renameat_fn);
  int rc = real_renameat(fromfd, from, tofd, to);
  if (rc == 0) record_rename(from, to);
  return rc;
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
  REAL(renameat2, renameat2_fn);
  int rc = real_renameat2(fromfd, from, tofd, to, flags);
  if (rc == 0) record_rename(from, to);
  return rc;
}
