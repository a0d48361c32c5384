/*
 * C baselines for the EventGraph benchmarks: raw LMDB and SQLite running the
 * workloads the Swift store runs, so the figures can be read as ratios.
 * See include/CBaselines.h for the contract of each function.
 */

#include "CBaselines.h"

#include <lmdb.h>
#include <sqlite3.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* MARK: - Shared helpers */

/** Virtual address space reserved for the map; the file stays sparse. */
static const size_t map_size = (size_t)64 << 30;

/** Largest value a benchmark may ask for; guards the allocations below. */
static const int64_t max_value_size = (int64_t)16 << 20;

/** Objects are 1 insert + 9 attribute sets. */
enum { events_per_object = 10, attributes_per_object = 9, durable_objects = 100 };

/** Event kinds stored in events.kind. */
enum { kind_insert = 1, kind_set = 2 };

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((format(printf, 2, 3))) static void fail(eg_result *r, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(r->message, sizeof r->message, format, args);
  va_end(args);
  r->operations = -1;
  r->seconds = 0;
}

static void encode_be64(unsigned char out[8], uint64_t v) {
  for (int i = 7; i >= 0; i--) {
    out[i] = (unsigned char)(v & 0xff);
    v >>= 8;
  }
}

/** `count` value slots of `size` bytes each (at least 1 byte in all, so
 *  malloc never returns a legitimate NULL), each filled with the same
 *  printable text, like a string attribute. Identical contents make the scan
 *  checksums of LMDB and SQLite comparable. */
static unsigned char *make_value_slots(int64_t size, int64_t count) {
  size_t n = size > 0 ? (size_t)(size * count) : 1;
  unsigned char *buf = malloc(n);
  if (buf != NULL) {
    for (size_t i = 0; i < n; i++) {
      buf[i] = (unsigned char)('a' + (size > 0 ? i % (size_t)size : 0) % 26);
    }
  }
  return buf;
}

/** Makes consecutive values differ: writes `seq` big-endian into the first
 *  (up to 8) bytes. Cheap on purpose, so the baselines time the engine. */
static void stamp_value(unsigned char *value, int64_t size, uint64_t seq) {
  unsigned char be[8];
  encode_be64(be, seq);
  size_t n = size < 8 ? (size_t)size : 8;
  memcpy(value, be + (8 - n), n);
}

static int validate_sizes(eg_result *r, int64_t count, int64_t per_txn, int64_t value_size) {
  if (count < 0) {
    fail(r, "count must not be negative (got %" PRId64 ")", count);
    return -1;
  }
  if (per_txn <= 0) {
    fail(r, "operations per transaction must be positive (got %" PRId64 ")", per_txn);
    return -1;
  }
  if (value_size < 0 || value_size > max_value_size) {
    fail(r, "value size must be within 0...%" PRId64 " (got %" PRId64 ")", max_value_size,
         value_size);
    return -1;
  }
  return 0;
}

/* MARK: - Directories */

/** Deletes everything below `path` (not `path` itself). */
static int remove_contents(const char *path, eg_result *r) {
  DIR *d = opendir(path);
  if (d == NULL) {
    fail(r, "opendir %s: %s", path, strerror(errno));
    return -1;
  }
  int status = 0;
  struct dirent *entry;
  char child[PATH_MAX];
  while (status == 0 && (entry = readdir(d)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    int n = snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
    if (n < 0 || (size_t)n >= sizeof child) {
      fail(r, "path too long below %s", path);
      status = -1;
      break;
    }
    struct stat st;
    if (lstat(child, &st) != 0) {
      fail(r, "lstat %s: %s", child, strerror(errno));
      status = -1;
    } else if (S_ISDIR(st.st_mode)) {
      status = remove_contents(child, r);
      if (status == 0 && rmdir(child) != 0) {
        fail(r, "rmdir %s: %s", child, strerror(errno));
        status = -1;
      }
    } else if (unlink(child) != 0) {
      fail(r, "unlink %s: %s", child, strerror(errno));
      status = -1;
    }
  }
  closedir(d);
  return status;
}

/** mkdir -p `dir`, then empties it. Refuses "" and "/". */
static int prepare_directory(const char *dir, eg_result *r) {
  if (dir == NULL || dir[0] == '\0' || strcmp(dir, "/") == 0) {
    fail(r, "refusing to use directory \"%s\"", dir == NULL ? "(null)" : dir);
    return -1;
  }
  char path[PATH_MAX];
  size_t len = strlen(dir);
  if (len >= sizeof path) {
    fail(r, "directory path too long");
    return -1;
  }
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
      fail(r, "mkdir %s: %s", path, strerror(errno));
      return -1;
    }
    path[i] = saved;
  }
  return remove_contents(dir, r);
}

eg_result eg_remove_directory(const char *dir) {
  eg_result r = {0};
  struct stat st;
  if (dir == NULL || dir[0] == '\0' || strcmp(dir, "/") == 0) {
    fail(&r, "refusing to remove directory \"%s\"", dir == NULL ? "(null)" : dir);
  } else if (lstat(dir, &st) != 0) {
    if (errno != ENOENT) fail(&r, "lstat %s: %s", dir, strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    fail(&r, "%s is not a directory", dir);
  } else if (remove_contents(dir, &r) == 0 && rmdir(dir) != 0) {
    fail(&r, "rmdir %s: %s", dir, strerror(errno));
  }
  return r;
}

/** Disk space allocated to the regular files directly in `dir`. */
static int64_t allocated_bytes(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int64_t total = 0;
  struct dirent *entry;
  char child[PATH_MAX];
  while ((entry = readdir(d)) != NULL) {
    int n = snprintf(child, sizeof child, "%s/%s", dir, entry->d_name);
    if (n < 0 || (size_t)n >= sizeof child) continue;
    struct stat st;
    if (lstat(child, &st) == 0 && S_ISREG(st.st_mode)) total += (int64_t)st.st_blocks * 512;
  }
  closedir(d);
  return total;
}

static int file_path(char *out, size_t capacity, const char *dir, const char *name, eg_result *r) {
  int n = snprintf(out, capacity, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= capacity) {
    fail(r, "path too long: %s/%s", dir, name);
    return -1;
  }
  return 0;
}

/* MARK: - LMDB */

static const char *const lmdb_database = "events";

/** Opens (creating) the environment in `dir`; closes it again on failure. */
static int lmdb_open(const char *dir, unsigned int flags, MDB_env **out, eg_result *r) {
  MDB_env *env = NULL;
  int rc = mdb_env_create(&env);
  if (rc != 0) {
    fail(r, "mdb_env_create: %s", mdb_strerror(rc));
    return -1;
  }
  /* Readers adopt the size recorded by the writer. */
  if ((flags & MDB_RDONLY) == 0 && (rc = mdb_env_set_mapsize(env, map_size)) != 0) {
    fail(r, "mdb_env_set_mapsize: %s", mdb_strerror(rc));
  } else if ((rc = mdb_env_set_maxdbs(env, 4)) != 0) {
    fail(r, "mdb_env_set_maxdbs: %s", mdb_strerror(rc));
  } else if ((rc = mdb_env_open(env, dir, flags, 0644)) != 0) {
    fail(r, "mdb_env_open %s: %s", dir, mdb_strerror(rc));
  }
  if (rc != 0) {
    mdb_env_close(env);
    return -1;
  }
  *out = env;
  return 0;
}

/** Creates the "events" database in its own committed transaction. */
static int lmdb_create_database(MDB_env *env, MDB_dbi *dbi, eg_result *r) {
  MDB_txn *txn = NULL;
  int rc = mdb_txn_begin(env, NULL, 0, &txn);
  if (rc != 0) {
    fail(r, "mdb_txn_begin: %s", mdb_strerror(rc));
    return -1;
  }
  if ((rc = mdb_dbi_open(txn, lmdb_database, MDB_CREATE, dbi)) != 0) {
    mdb_txn_abort(txn);
    fail(r, "mdb_dbi_open: %s", mdb_strerror(rc));
    return -1;
  }
  if ((rc = mdb_txn_commit(txn)) != 0) {
    fail(r, "mdb_txn_commit: %s", mdb_strerror(rc));
    return -1;
  }
  return 0;
}

/** The shared writer: `total` puts, `per_txn` per write transaction. */
static eg_result lmdb_write(const char *dir, int64_t total, int64_t per_txn, int64_t value_size,
                            unsigned int put_flags, unsigned int env_flags) {
  eg_result r = {0};
  if (validate_sizes(&r, total, per_txn, value_size) != 0) return r;
  if (prepare_directory(dir, &r) != 0) return r;

  MDB_env *env = NULL;
  if (lmdb_open(dir, env_flags, &env, &r) != 0) return r;
  MDB_dbi dbi;
  unsigned char *value = make_value_slots(value_size, 1);
  if (value == NULL) {
    fail(&r, "out of memory for a %" PRId64 "-byte value", value_size);
  } else if (lmdb_create_database(env, &dbi, &r) == 0) {
    unsigned char key_bytes[8];
    MDB_val key = {.mv_size = sizeof key_bytes, .mv_data = key_bytes};
    MDB_val data = {.mv_size = (size_t)value_size, .mv_data = value};
    uint64_t seq = 0;
    int rc = 0;
    double start = now_seconds();
    while ((int64_t)seq < total && rc == 0) {
      MDB_txn *txn = NULL;
      if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0) {
        fail(&r, "mdb_txn_begin: %s", mdb_strerror(rc));
        break;
      }
      int64_t n = total - (int64_t)seq < per_txn ? total - (int64_t)seq : per_txn;
      for (int64_t i = 0; i < n; i++) {
        seq++;
        encode_be64(key_bytes, seq);
        stamp_value(value, value_size, seq);
        /* mdb_put may rewrite mv_size/mv_data on some paths: reset each time. */
        data.mv_size = (size_t)value_size;
        data.mv_data = value;
        if ((rc = mdb_put(txn, dbi, &key, &data, put_flags)) != 0) {
          fail(&r, "mdb_put (seq %" PRIu64 "): %s", seq, mdb_strerror(rc));
          break;
        }
      }
      if (rc != 0) {
        mdb_txn_abort(txn);
      } else if ((rc = mdb_txn_commit(txn)) != 0) {
        fail(&r, "mdb_txn_commit: %s", mdb_strerror(rc));
      }
    }
    if (rc == 0) {
      r.seconds = now_seconds() - start;
      r.operations = (int64_t)seq;
      r.bytes = (int64_t)seq * (8 + value_size);
    }
  }
  free(value);
  mdb_env_close(env);
  if (r.operations >= 0) r.file_bytes = allocated_bytes(dir);
  return r;
}

eg_result eg_lmdb_batched_puts(const char *dir, int64_t total_events, int64_t events_per_txn,
                               int64_t value_size, bool use_append) {
  return lmdb_write(dir, total_events, events_per_txn, value_size, use_append ? MDB_APPEND : 0, 0);
}

eg_result eg_lmdb_durable_commits(const char *dir, int64_t commits, int64_t value_size) {
  return lmdb_write(dir, commits, 1, value_size, 0, 0);
}

eg_result eg_lmdb_unsynced_commits(const char *dir, int64_t commits, int64_t value_size) {
  return lmdb_write(dir, commits, 1, value_size, 0, MDB_NOSYNC);
}

eg_result eg_lmdb_cursor_scan(const char *dir) {
  eg_result r = {0};
  MDB_env *env = NULL;
  if (lmdb_open(dir, MDB_RDONLY, &env, &r) != 0) return r;

  MDB_txn *txn = NULL;
  MDB_cursor *cursor = NULL;
  MDB_dbi dbi;
  int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
  if (rc != 0) {
    fail(&r, "mdb_txn_begin: %s", mdb_strerror(rc));
  } else if ((rc = mdb_dbi_open(txn, lmdb_database, 0, &dbi)) != 0) {
    fail(&r, "mdb_dbi_open %s: %s", lmdb_database, mdb_strerror(rc));
  } else if ((rc = mdb_cursor_open(txn, dbi, &cursor)) != 0) {
    fail(&r, "mdb_cursor_open: %s", mdb_strerror(rc));
  } else {
    MDB_val key, data;
    int64_t records = 0, bytes = 0;
    uint64_t sum = 0;
    double start = now_seconds();
    for (rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)) {
      const unsigned char *p = data.mv_data;
      for (size_t i = 0; i < data.mv_size; i++) sum += p[i];
      bytes += (int64_t)data.mv_size;
      records++;
    }
    double elapsed = now_seconds() - start;
    if (rc != MDB_NOTFOUND) {
      fail(&r, "mdb_cursor_get: %s", mdb_strerror(rc));
    } else {
      r.seconds = elapsed;
      r.operations = records;
      r.bytes = bytes;
      r.checksum = sum;
    }
    mdb_cursor_close(cursor);
  }
  if (txn != NULL) mdb_txn_abort(txn);
  mdb_env_close(env);
  if (r.operations >= 0) r.file_bytes = allocated_bytes(dir);
  return r;
}

/* MARK: - SQLite helpers */

static const char *const sqlite_events_file = "events.sqlite";
static const char *const sqlite_upcast_file = "address_book.sqlite";

/** Opens `path`; a handle returned with an error is closed here. */
static int sqlite_open(const char *path, int flags, sqlite3 **out, eg_result *r) {
  sqlite3 *db = NULL;
  int rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK) {
    fail(r, "sqlite3_open_v2 %s: %s", path, db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return -1;
  }
  sqlite3_extended_result_codes(db, 1);
  *out = db;
  return 0;
}

static int sqlite_exec(sqlite3 *db, const char *sql, eg_result *r) {
  char *error = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
    fail(r, "%s: %s", sql, error != NULL ? error : sqlite3_errmsg(db));
    sqlite3_free(error);
    return -1;
  }
  return 0;
}

static int wal_mode_callback(void *found, int columns, char **values, char **names) {
  (void)names;
  if (columns == 1 && values[0] != NULL && strcmp(values[0], "wal") == 0) *(int *)found = 1;
  return 0;
}

/** WAL with synchronous=FULL: every COMMIT fsyncs the WAL, so a commit is as
 *  durable as LMDB's default. */
static int sqlite_configure(sqlite3 *db, eg_result *r) {
  int wal = 0;
  char *error = NULL;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL", wal_mode_callback, &wal, &error) != SQLITE_OK) {
    fail(r, "PRAGMA journal_mode=WAL: %s", error != NULL ? error : sqlite3_errmsg(db));
    sqlite3_free(error);
    return -1;
  }
  if (!wal) {
    fail(r, "PRAGMA journal_mode=WAL: the database refused WAL mode");
    return -1;
  }
  return sqlite_exec(db, "PRAGMA synchronous=FULL", r);
}

static int sqlite_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, eg_result *r) {
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) != SQLITE_OK) {
    fail(r, "prepare %s: %s", sql, sqlite3_errmsg(db));
    return -1;
  }
  return 0;
}

/** Runs a statement that returns no rows and resets it for the next use. */
static int sqlite_run(sqlite3_stmt *stmt, eg_result *r) {
  int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE) {
    fail(r, "%s: %s", sqlite3_sql(stmt), sqlite3_errmsg(sqlite3_db_handle(stmt)));
  }
  sqlite3_reset(stmt);
  return rc == SQLITE_DONE ? 0 : -1;
}

/** Finalizes every non-NULL statement of the array. */
static void sqlite_finalize_all(sqlite3_stmt **stmts, size_t count) {
  for (size_t i = 0; i < count; i++) sqlite3_finalize(stmts[i]);
}

static const char *const events_schema =
    "CREATE TABLE events(seq INTEGER PRIMARY KEY, commit_id INTEGER, object INTEGER,"
    " kind INTEGER, key INTEGER, value BLOB);"
    "CREATE TABLE objects(id INTEGER PRIMARY KEY, entity INTEGER, a1 BLOB, a2 BLOB, a3 BLOB,"
    " a4 BLOB, a5 BLOB, a6 BLOB, a7 BLOB, a8 BLOB, a9 BLOB);"
    "CREATE TABLE history(object INTEGER, seq INTEGER, PRIMARY KEY(object, seq)) WITHOUT ROWID;";

static const char *const insert_event_sql =
    "INSERT INTO events(seq, commit_id, object, kind, key, value) VALUES(?1, ?2, ?3, ?4, ?5, ?6)";
static const char *const insert_history_sql = "INSERT INTO history(object, seq) VALUES(?1, ?2)";

/** Creates `dir`/events.sqlite with the schema; closes it on failure. */
static int sqlite_create_events_store(const char *dir, sqlite3 **out, eg_result *r) {
  char path[PATH_MAX];
  if (prepare_directory(dir, r) != 0) return -1;
  if (file_path(path, sizeof path, dir, sqlite_events_file, r) != 0) return -1;
  sqlite3 *db = NULL;
  if (sqlite_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, r) != 0) return -1;
  if (sqlite_configure(db, r) != 0 || sqlite_exec(db, events_schema, r) != 0) {
    sqlite3_close(db);
    return -1;
  }
  *out = db;
  return 0;
}

static int bind_event(sqlite3_stmt *stmt, int64_t seq, int64_t commit_id, int64_t object,
                      int kind, int key, const unsigned char *value, int64_t value_size) {
  int rc = sqlite3_bind_int64(stmt, 1, seq);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 2, commit_id);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 3, object);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 4, kind);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int(stmt, 5, key);
  if (rc == SQLITE_OK) rc = sqlite3_bind_blob(stmt, 6, value, (int)value_size, SQLITE_STATIC);
  return rc;
}

static int bind_history(sqlite3_stmt *stmt, int64_t object, int64_t seq) {
  int rc = sqlite3_bind_int64(stmt, 1, object);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, 2, seq);
  return rc;
}

/* MARK: - SQLite peer workloads */

enum { stmt_begin, stmt_commit, stmt_event, stmt_history, stmt_object, batched_stmt_count };

eg_result eg_sqlite_batched(const char *dir, int64_t total_events, int64_t events_per_txn,
                            int64_t value_size) {
  eg_result r = {0};
  if (validate_sizes(&r, total_events, events_per_txn, value_size) != 0) return r;
  if (events_per_txn % events_per_object != 0) {
    fail(&r, "events per transaction must be a multiple of %d (got %" PRId64 ")",
         events_per_object, events_per_txn);
    return r;
  }
  sqlite3 *db = NULL;
  if (sqlite_create_events_store(dir, &db, &r) != 0) return r;

  sqlite3_stmt *stmts[batched_stmt_count] = {0};
  /* Slot 0 holds the insert event's value, slots 1...9 the attribute values
   * of the current object until its state row is written. */
  unsigned char *slots = make_value_slots(value_size, events_per_object);
  if (slots == NULL) {
    fail(&r, "out of memory for values of %" PRId64 " bytes", value_size);
  } else if (sqlite_prepare(db, "BEGIN IMMEDIATE", &stmts[stmt_begin], &r) == 0 &&
             sqlite_prepare(db, "COMMIT", &stmts[stmt_commit], &r) == 0 &&
             sqlite_prepare(db, insert_event_sql, &stmts[stmt_event], &r) == 0 &&
             sqlite_prepare(db, insert_history_sql, &stmts[stmt_history], &r) == 0 &&
             sqlite_prepare(db,
                            "INSERT INTO objects(id, entity, a1, a2, a3, a4, a5, a6, a7, a8, a9)"
                            " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                            &stmts[stmt_object], &r) == 0) {
    int64_t seq = 0, commit_id = 0, bytes = 0;
    int status = 0;
    double start = now_seconds();
    while (seq < total_events && status == 0) {
      commit_id++;
      int64_t n = total_events - seq < events_per_txn ? total_events - seq : events_per_txn;
      if ((status = sqlite_run(stmts[stmt_begin], &r)) != 0) break;
      for (int64_t i = 0; i < n && status == 0; i++) {
        seq++;
        int64_t object = (seq - 1) / events_per_object + 1;
        int k = (int)((seq - 1) % events_per_object);
        unsigned char *value = slots + k * value_size;
        stamp_value(value, value_size, (uint64_t)seq);
        int rc = bind_event(stmts[stmt_event], seq, commit_id, object,
                            k == 0 ? kind_insert : kind_set, k, value, value_size);
        if (rc != SQLITE_OK) {
          fail(&r, "bind event: %s", sqlite3_errstr(rc));
          status = -1;
          break;
        }
        if ((status = sqlite_run(stmts[stmt_event], &r)) != 0) break;
        bytes += value_size;
        if (k != events_per_object - 1 && i != n - 1) continue;

        /* The object's last event in this transaction: its state row once,
         * with every attribute set so far, and one history row. */
        sqlite3_stmt *row = stmts[stmt_object];
        rc = sqlite3_bind_int64(row, 1, object);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(row, 2, 1);
        for (int a = 1; a <= attributes_per_object && rc == SQLITE_OK; a++) {
          rc = a <= k ? sqlite3_bind_blob(row, a + 2, slots + a * value_size, (int)value_size,
                                          SQLITE_STATIC)
                      : sqlite3_bind_null(row, a + 2);
        }
        if (rc == SQLITE_OK) rc = bind_history(stmts[stmt_history], object, seq);
        if (rc != SQLITE_OK) {
          fail(&r, "bind object: %s", sqlite3_errstr(rc));
          status = -1;
          break;
        }
        if ((status = sqlite_run(row, &r)) != 0) break;
        if ((status = sqlite_run(stmts[stmt_history], &r)) != 0) break;
        bytes += k * value_size;
      }
      if (status == 0) {
        status = sqlite_run(stmts[stmt_commit], &r);
      } else {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
      }
    }
    if (status == 0) {
      r.seconds = now_seconds() - start;
      r.operations = seq;
      r.bytes = bytes;
    }
  }
  free(slots);
  sqlite_finalize_all(stmts, batched_stmt_count);
  sqlite3_close(db);
  if (r.operations >= 0) r.file_bytes = allocated_bytes(dir);
  return r;
}

eg_result eg_sqlite_durable_commits(const char *dir, int64_t commits, int64_t value_size) {
  eg_result r = {0};
  if (validate_sizes(&r, commits, 1, value_size) != 0) return r;
  sqlite3 *db = NULL;
  if (sqlite_create_events_store(dir, &db, &r) != 0) return r;

  enum { count = stmt_object + attributes_per_object };
  sqlite3_stmt *stmts[count] = {0};
  unsigned char *value = make_value_slots(value_size, 1);
  int status = value == NULL ? -1 : 0;
  if (value == NULL) fail(&r, "out of memory for a %" PRId64 "-byte value", value_size);
  if (status == 0) {
    bool failed = sqlite_prepare(db, "BEGIN IMMEDIATE", &stmts[stmt_begin], &r) != 0 ||
                  sqlite_prepare(db, "COMMIT", &stmts[stmt_commit], &r) != 0 ||
                  sqlite_prepare(db, insert_event_sql, &stmts[stmt_event], &r) != 0 ||
                  sqlite_prepare(db, insert_history_sql, &stmts[stmt_history], &r) != 0;
    status = failed ? -1 : 0;
  }
  /* One upsert per attribute column: the state row changes one value. */
  for (int a = 1; a <= attributes_per_object && status == 0; a++) {
    char sql[160];
    snprintf(sql, sizeof sql,
             "INSERT INTO objects(id, entity, a%d) VALUES(?1, 1, ?2)"
             " ON CONFLICT(id) DO UPDATE SET a%d = excluded.a%d",
             a, a, a);
    status = sqlite_prepare(db, sql, &stmts[stmt_object + a - 1], &r);
  }
  if (status == 0) {
    int64_t seq = 0;
    double start = now_seconds();
    while (seq < commits && status == 0) {
      seq++;
      int64_t object = (seq - 1) % durable_objects + 1;
      int a = (int)((seq - 1) / durable_objects % attributes_per_object) + 1;
      sqlite3_stmt *upsert = stmts[stmt_object + a - 1];
      stamp_value(value, value_size, (uint64_t)seq);
      int rc = bind_event(stmts[stmt_event], seq, seq, object, kind_set, a, value, value_size);
      if (rc == SQLITE_OK) rc = sqlite3_bind_int64(upsert, 1, object);
      if (rc == SQLITE_OK) rc = sqlite3_bind_blob(upsert, 2, value, (int)value_size, SQLITE_STATIC);
      if (rc == SQLITE_OK) rc = bind_history(stmts[stmt_history], object, seq);
      if (rc != SQLITE_OK) {
        fail(&r, "bind: %s", sqlite3_errstr(rc));
        status = -1;
        break;
      }
      if ((status = sqlite_run(stmts[stmt_begin], &r)) != 0) break;
      if (sqlite_run(stmts[stmt_event], &r) != 0 || sqlite_run(upsert, &r) != 0 ||
          sqlite_run(stmts[stmt_history], &r) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        status = -1;
        break;
      }
      status = sqlite_run(stmts[stmt_commit], &r);
    }
    if (status == 0) {
      r.seconds = now_seconds() - start;
      r.operations = seq;
      r.bytes = seq * 2 * value_size;
    }
  }
  free(value);
  sqlite_finalize_all(stmts, count);
  sqlite3_close(db);
  if (r.operations >= 0) r.file_bytes = allocated_bytes(dir);
  return r;
}

eg_result eg_sqlite_scan(const char *dir) {
  eg_result r = {0};
  char path[PATH_MAX];
  if (file_path(path, sizeof path, dir, sqlite_events_file, &r) != 0) return r;
  sqlite3 *db = NULL;
  /* Read-write without CREATE: a WAL reader may need to recreate -shm. */
  if (sqlite_open(path, SQLITE_OPEN_READWRITE, &db, &r) != 0) return r;
  sqlite3_stmt *stmt = NULL;
  if (sqlite_prepare(db, "SELECT value FROM events ORDER BY seq", &stmt, &r) == 0) {
    int64_t rows = 0, bytes = 0;
    uint64_t sum = 0;
    int rc;
    double start = now_seconds();
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const unsigned char *p = sqlite3_column_blob(stmt, 0);
      int n = sqlite3_column_bytes(stmt, 0);
      for (int i = 0; i < n; i++) sum += p[i];
      bytes += n;
      rows++;
    }
    double elapsed = now_seconds() - start;
    if (rc != SQLITE_DONE) {
      fail(&r, "SELECT value FROM events: %s", sqlite3_errmsg(db));
    } else {
      r.seconds = elapsed;
      r.operations = rows;
      r.bytes = bytes;
      r.checksum = sum;
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  if (r.operations >= 0) r.file_bytes = allocated_bytes(dir);
  return r;
}

/* MARK: - SQLite schema migration peer */

void eg_upcast_person(int64_t id, eg_person *out) {
  memset(out, 0, sizeof *out);
  int64_t id_mod = id % 100000000;
  snprintf(out->first_name, sizeof out->first_name, "First %" PRId64, id_mod);
  snprintf(out->last_name, sizeof out->last_name, "Last %" PRId64, id_mod);
  int high = (int)(id_mod / 10000 % 10000), low = (int)(id_mod % 10000);
  out->has_phone1 = id % 3 != 0;
  if (out->has_phone1 && id % 9 != 1) {
    snprintf(out->phone1, sizeof out->phone1, "03-%04d-%04d", high, low);
  }
  out->has_phone2 = (id / 3) % 3 != 0;
  if (out->has_phone2 && id % 9 != 5) {
    snprintf(out->phone2, sizeof out->phone2, "090-%04d-%04d", high, low);
  }
}

static int bind_text_or_null(sqlite3_stmt *stmt, int index, bool present, const char *text,
                             int64_t *bytes) {
  if (!present) return sqlite3_bind_null(stmt, index);
  size_t n = strlen(text);
  *bytes += (int64_t)n;
  return sqlite3_bind_text(stmt, index, text, (int)n, SQLITE_STATIC);
}

/** Fills address_book; the timed part of the first phase. */
static void upcast_fill(sqlite3 *db, int64_t people, int64_t per_txn, eg_result *r) {
  sqlite3_stmt *begin = NULL, *commit = NULL, *insert = NULL;
  if (sqlite_prepare(db, "BEGIN IMMEDIATE", &begin, r) == 0 &&
      sqlite_prepare(db, "COMMIT", &commit, r) == 0 &&
      sqlite_prepare(db,
                     "INSERT INTO address_book(id, first_name, last_name, phone1, phone2)"
                     " VALUES(?1, ?2, ?3, ?4, ?5)",
                     &insert, r) == 0) {
    eg_person p;
    int64_t id = 0, bytes = 0;
    int status = 0;
    double start = now_seconds();
    while (id < people && status == 0) {
      if ((status = sqlite_run(begin, r)) != 0) break;
      int64_t end = people - id < per_txn ? people : id + per_txn;
      while (id < end && status == 0) {
        id++;
        eg_upcast_person(id, &p);
        int rc = sqlite3_bind_int64(insert, 1, id);
        if (rc == SQLITE_OK) rc = bind_text_or_null(insert, 2, true, p.first_name, &bytes);
        if (rc == SQLITE_OK) rc = bind_text_or_null(insert, 3, true, p.last_name, &bytes);
        if (rc == SQLITE_OK) rc = bind_text_or_null(insert, 4, p.has_phone1, p.phone1, &bytes);
        if (rc == SQLITE_OK) rc = bind_text_or_null(insert, 5, p.has_phone2, p.phone2, &bytes);
        if (rc != SQLITE_OK) {
          fail(r, "bind person: %s", sqlite3_errstr(rc));
          status = -1;
        } else {
          status = sqlite_run(insert, r);
        }
      }
      if (status == 0) {
        status = sqlite_run(commit, r);
      } else {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
      }
    }
    if (status == 0) {
      r->seconds = now_seconds() - start;
      r->operations = id;
      r->bytes = bytes;
    }
  }
  sqlite3_finalize(begin);
  sqlite3_finalize(commit);
  sqlite3_finalize(insert);
}

static int64_t query_int(sqlite3 *db, const char *sql, eg_result *r) {
  sqlite3_stmt *stmt = NULL;
  int64_t value = -1;
  if (sqlite_prepare(db, sql, &stmt, r) != 0) return -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    value = sqlite3_column_int64(stmt, 0);
  } else {
    fail(r, "%s: %s", sql, sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  return value;
}

/** The migration, in SQL and in one transaction; the second timed phase. */
static void upcast_migrate(sqlite3 *db, eg_result *r) {
  static const char *const steps[] = {
      "BEGIN IMMEDIATE",
      "CREATE TABLE phone_book(id INTEGER PRIMARY KEY, address_book INTEGER,"
      " phone_number TEXT, type INTEGER)",
      "INSERT INTO phone_book(address_book, phone_number, type)"
      " SELECT id, phone1, 1 FROM address_book WHERE phone1 IS NOT NULL AND phone1 <> ''",
      "INSERT INTO phone_book(address_book, phone_number, type)"
      " SELECT id, phone2, 2 FROM address_book WHERE phone2 IS NOT NULL AND phone2 <> ''",
      "CREATE INDEX phone_book_address_book ON phone_book(address_book)",
      "ALTER TABLE address_book DROP COLUMN phone1",
      "ALTER TABLE address_book DROP COLUMN phone2",
      "COMMIT",
  };
  int64_t phones = 0, bytes = 0;
  double start = now_seconds();
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (sqlite_exec(db, steps[i], r) != 0) {
      if (i > 0) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
      return;
    }
    if (i == 2 || i == 3) phones += sqlite3_changes(db);
  }
  double elapsed = now_seconds() - start;

  /* Untimed checks that the migration did what it says. */
  int64_t rows = query_int(db, "SELECT count(*) FROM phone_book", r);
  if (rows < 0) return;
  if (rows != phones) {
    fail(r, "phone_book has %" PRId64 " rows, the inserts reported %" PRId64, rows, phones);
    return;
  }
  int64_t columns = query_int(db, "SELECT count(*) FROM pragma_table_info('address_book')", r);
  if (columns != 3) {
    if (columns >= 0) fail(r, "address_book has %" PRId64 " columns, expected 3", columns);
    return;
  }
  bytes = query_int(db, "SELECT coalesce(sum(length(phone_number)), 0) FROM phone_book", r);
  if (bytes < 0) return;
  r->seconds = elapsed;
  r->operations = phones;
  r->bytes = bytes;
}

eg_upcast_result eg_sqlite_upcast_peer(const char *dir, int64_t people, int64_t people_per_txn) {
  eg_upcast_result u;
  memset(&u, 0, sizeof u);
  eg_result *fill = &u.fill, *migration = &u.migration;
  char path[PATH_MAX];
  sqlite3 *db = NULL;
  if (validate_sizes(fill, people, people_per_txn, 0) == 0 &&
      prepare_directory(dir, fill) == 0 &&
      file_path(path, sizeof path, dir, sqlite_upcast_file, fill) == 0 &&
      sqlite_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db, fill) == 0) {
    if (sqlite_configure(db, fill) == 0 &&
        sqlite_exec(db,
                    "CREATE TABLE address_book(id INTEGER PRIMARY KEY, first_name TEXT,"
                    " last_name TEXT, phone1 TEXT, phone2 TEXT)",
                    fill) == 0) {
      upcast_fill(db, people, people_per_txn, fill);
      if (fill->operations >= 0) upcast_migrate(db, migration);
    }
    sqlite3_close(db);
  }
  /* A failure in either phase fails both, so no half result is reported. */
  if (fill->operations < 0) {
    *migration = *fill;
  } else if (migration->operations < 0) {
    *fill = *migration;
  } else {
    fill->file_bytes = migration->file_bytes = allocated_bytes(dir);
  }
  return u;
}
