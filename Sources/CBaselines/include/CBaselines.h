#ifndef EVENTGRAPH_CBASELINES_H
#define EVENTGRAPH_CBASELINES_H

/*
 * C baselines for the EventGraph benchmarks: the same workloads driven
 * straight through raw LMDB and through SQLite, so the Swift store can be
 * reported as a ratio of what C gets from the same engines on the same disk.
 *
 * Conventions shared by every function:
 *  - `dir` is a directory owned by the benchmark. Writers create it (with
 *    parents) and delete everything inside it first; readers open what a
 *    writer left there. "/" and "" are refused.
 *  - The timed interval is the workload alone (first transaction begin to
 *    last commit, or first to last row of a scan), measured with
 *    CLOCK_MONOTONIC. Opening, schema creation and closing are not timed.
 *  - Durability is the engine's default full durability: LMDB without
 *    MDB_NOSYNC/MDB_NOMETASYNC, SQLite in WAL mode with synchronous=FULL.
 *  - Nothing aborts: on failure `operations` is negative and `message` says
 *    which call failed and why.
 *
 * The header deliberately mentions no LMDB or SQLite type, so a Swift module
 * importing it sees only plain C values.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Size of eg_result.message, including the terminating NUL. */
#define EG_MESSAGE_CAPACITY 256

/** One measured run of one workload. */
typedef struct eg_result {
  /** Wall time of the timed interval, in seconds (CLOCK_MONOTONIC). */
  double seconds;
  /** Operations performed (events written, commits, rows read); negative on error. */
  int64_t operations;
  /** Payload bytes handed to (or read from) the engine: keys + values for
   *  LMDB, bound blob/text bytes for SQLite. */
  int64_t bytes;
  /** Disk space allocated by the files in `dir` after the run (st_blocks). */
  int64_t file_bytes;
  /** Scans: sum of every value byte read, so the reads cannot be optimized
   *  away and two scans of the same data can be compared. 0 for writers. */
  uint64_t checksum;
  /** NUL-terminated error text when operations < 0, otherwise "". */
  char message[EG_MESSAGE_CAPACITY];
} eg_result;

/* MARK: - Raw LMDB */

/**
 * Appends `total_events` values of `value_size` bytes to one named LMDB
 * database ("events"), `events_per_txn` puts per write transaction (the last
 * one may be short). Keys are the 8-byte big-endian sequence 1, 2, 3, ...
 * With `use_append`, every put passes MDB_APPEND. The map is 64 GiB (sparse).
 * operations = events, bytes = events * (8 + value_size).
 */
eg_result eg_lmdb_batched_puts(const char *dir, int64_t total_events, int64_t events_per_txn,
                               int64_t value_size, bool use_append);

/**
 * `commits` write transactions of one `value_size`-byte put each, fully
 * durable: the rate is bound by fsync. operations = commits.
 */
eg_result eg_lmdb_durable_commits(const char *dir, int64_t commits, int64_t value_size);

/**
 * The same commits with MDB_NOSYNC: no fsync, so the rate is the CPU (and page
 * writing) cost of a one-put commit. operations = commits.
 */
eg_result eg_lmdb_unsynced_commits(const char *dir, int64_t commits, int64_t value_size);

/**
 * Opens the environment left in `dir` by eg_lmdb_batched_puts (or
 * eg_lmdb_durable_commits) read-only and walks the "events" database with a
 * cursor in one read transaction, adding up every value byte.
 * operations = records, bytes = value bytes, checksum = sum of value bytes.
 */
eg_result eg_lmdb_cursor_scan(const char *dir);

/* MARK: - SQLite peer */

/*
 * Schema (file `dir`/events.sqlite, WAL, synchronous=FULL, prepared statements):
 *   events(seq INTEGER PRIMARY KEY, commit_id INTEGER, object INTEGER,
 *          kind INTEGER, key INTEGER, value BLOB)
 *   objects(id INTEGER PRIMARY KEY, entity INTEGER, a1 BLOB, ..., a9 BLOB)
 *   history(object INTEGER, seq INTEGER, PRIMARY KEY(object, seq)) WITHOUT ROWID
 * Event kinds: 1 = insert (key 0), 2 = set attribute `key` (1...9). Every
 * event carries a `value_size`-byte value.
 */

/**
 * Batched writes as the store does them: each object is 10 events (1 insert
 * + 9 sets); per transaction (BEGIN IMMEDIATE ... COMMIT) `events_per_txn`
 * event rows, one objects row per object with all its values (INSERT) and
 * one history row per object (its last event's seq). `events_per_txn` must
 * be a multiple of 10 so no object spans two transactions.
 * operations = events, bytes = bound value bytes (events + state rows).
 */
eg_result eg_sqlite_batched(const char *dir, int64_t total_events, int64_t events_per_txn,
                            int64_t value_size);

/**
 * `commits` transactions of 1 set event row + an upsert of that object's
 * state row (one attribute column) + 1 history row, cycling over 100 objects
 * and 9 attributes. operations = commits.
 */
eg_result eg_sqlite_durable_commits(const char *dir, int64_t commits, int64_t value_size);

/**
 * Reads every row of `events` left in `dir` by eg_sqlite_batched, touching
 * every value byte. operations = rows, bytes = value bytes, checksum = sum.
 */
eg_result eg_sqlite_scan(const char *dir);

/* MARK: - SQLite schema migration peer (the address book of seed 000) */

/** The two measured phases of eg_sqlite_upcast_peer. */
typedef struct eg_upcast_result {
  /** Filling address_book: operations = people. */
  eg_result fill;
  /** The migration transaction: operations = phone_book rows created. */
  eg_result migration;
} eg_upcast_result;

/**
 * Fills `address_book(id, first_name, last_name, phone1, phone2)` with
 * `people` rows (ids 1...people, `people_per_txn` per transaction, see
 * eg_upcast_person), then migrates in SQL, in one transaction: creates
 * `phone_book(id, address_book, phone_number, type)`, copies the non-empty
 * phone1 (type 1) and phone2 (type 2) with INSERT ... SELECT, indexes
 * phone_book(address_book) and drops address_book.phone1 and .phone2.
 * On failure both results carry a negative count and the message.
 */
eg_upcast_result eg_sqlite_upcast_peer(const char *dir, int64_t people, int64_t people_per_txn);

/** Capacity of each text field of eg_person, including the NUL. */
#define EG_PERSON_TEXT_CAPACITY 32

/**
 * One person of the deterministic address book, so a Swift benchmark can
 * build exactly the data the SQLite peer migrates. Person `id` (1-based):
 *   phone1 is NULL when id % 3 == 0, "" when id % 9 == 1, else "03-....-....";
 *   phone2 is NULL when (id / 3) % 3 == 0, "" when id % 9 == 5, else "090-....-....".
 * About 2/3 of the people have each phone, 1/9 of all have each empty.
 */
typedef struct eg_person {
  char first_name[EG_PERSON_TEXT_CAPACITY];
  char last_name[EG_PERSON_TEXT_CAPACITY];
  char phone1[EG_PERSON_TEXT_CAPACITY];
  char phone2[EG_PERSON_TEXT_CAPACITY];
  bool has_phone1; /**< false: phone1 is NULL */
  bool has_phone2; /**< false: phone2 is NULL */
} eg_person;

/** Fills `out` with person `id`. */
void eg_upcast_person(int64_t id, eg_person *out);

/* MARK: - Housekeeping */

/**
 * Removes `dir` and everything in it (symbolic links are removed, never
 * followed). A missing `dir` is not an error; "/" and "" are refused.
 * operations = 0 on success, negative with a message on failure.
 */
eg_result eg_remove_directory(const char *dir);

/* MARK: - Core Data's SQLite layout (coredata.c) */

/**
 * Writes a Core Data SQLite store at `path` (replacing it), in one transaction:
 * Z_PRIMARYKEY (Company 1, Employee 2), Z_METADATA, ZCOMPANY with `companies`
 * rows (ZNAME) and ZEMPLOYEE with `employees_per_company` rows a company
 * (ZNAME, ZSALARY, the to-one ZCOMPANY, and Z_FOK_COMPANY, the order of the
 * ordered to-many Company.employees: the reverse of Z_PK within a company).
 * The timed interval is the inserts. operations = rows.
 */
eg_result eg_coredata_build(const char *path, int64_t companies, int64_t employees_per_company);

/**
 * sqlite3's own full scan of that store: every column of every row of both
 * tables, read with sqlite3_column_*, text bytes added up. operations = rows.
 */
eg_result eg_coredata_scan(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* EVENTGRAPH_CBASELINES_H */
