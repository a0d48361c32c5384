/*
 * A Core Data SQLite store built and scanned in C, for the import benchmark: the
 * store the importer reads, and SQLite's own full scan of it as the floor.
 */
#include "CBaselines.h"

#include <sqlite3.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void cd_fail(eg_result *r, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(r->message, EG_MESSAGE_CAPACITY, format, args);
  va_end(args);
  r->operations = -1;
}

static double cd_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cd_exec(sqlite3 *db, const char *sql, eg_result *r) {
  char *error = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
    cd_fail(r, "%.60s: %s", sql, error != NULL ? error : sqlite3_errmsg(db));
    sqlite3_free(error);
    return -1;
  }
  return 0;
}

eg_result eg_coredata_build(const char *path, int64_t companies, int64_t per) {
  eg_result r = {0};
  unlink(path);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    cd_fail(&r, "sqlite3_open_v2 %s: %s", path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return r;
  }
  char sql[2048];
  snprintf(sql, sizeof sql,
           "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);"
           "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Company', 0, %lld), (2, 'Employee', 0, %lld);"
           "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);"
           "INSERT INTO Z_METADATA VALUES (1, 'B0A1C2D3-0000-4000-8000-000000000001', NULL);"
           "CREATE TABLE ZCOMPANY (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);"
           "CREATE TABLE ZEMPLOYEE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOMPANY INTEGER,"
           " Z_FOK_COMPANY INTEGER, ZSALARY INTEGER, ZNAME VARCHAR);"
           "CREATE INDEX ZEMPLOYEE_ZCOMPANY_INDEX ON ZEMPLOYEE (ZCOMPANY);",
           (long long)companies, (long long)(companies * per));
  if (cd_exec(db, sql, &r) != 0) goto done;
  double start = cd_now();
  snprintf(sql, sizeof sql,
           "BEGIN;"
           "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %lld)"
           " INSERT INTO ZCOMPANY SELECT x, 1, 1, 'Company ' || x FROM c;"
           "WITH RECURSIVE e(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM e WHERE x < %lld)"
           " INSERT INTO ZEMPLOYEE SELECT x, 2, 1, (x - 1) / %lld + 1, %lld - (x - 1) %% %lld, 1000 + x,"
           " 'Employee ' || x FROM e;"
           "COMMIT;",
           (long long)companies, (long long)(companies * per), (long long)per, (long long)per, (long long)per);
  if (cd_exec(db, sql, &r) != 0) goto done;
  r.seconds = cd_now() - start;
  r.operations = companies + companies * per;
done:
  sqlite3_close(db);
  return r;
}

eg_result eg_coredata_scan(const char *path) {
  eg_result r = {0};
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    cd_fail(&r, "sqlite3_open_v2 %s: %s", path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return r;
  }
  const char *queries[] = {
      "SELECT Z_PK, Z_ENT, ZNAME FROM ZCOMPANY ORDER BY Z_PK",
      "SELECT Z_PK, Z_ENT, ZCOMPANY, Z_FOK_COMPANY, ZSALARY, ZNAME FROM ZEMPLOYEE ORDER BY ZCOMPANY, Z_FOK_COMPANY, Z_PK",
  };
  double start = cd_now();
  int64_t rows = 0;
  uint64_t sum = 0;
  for (int q = 0; q < 2; q++) {
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, queries[q], -1, &stmt, NULL) != SQLITE_OK) {
      cd_fail(&r, "prepare %s: %s", queries[q], sqlite3_errmsg(db));
      sqlite3_close(db);
      return r;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      int columns = sqlite3_column_count(stmt);
      for (int c = 0; c < columns - 1; c++) sum += (uint64_t)sqlite3_column_int64(stmt, c);
      const unsigned char *text = sqlite3_column_text(stmt, columns - 1);
      int n = sqlite3_column_bytes(stmt, columns - 1);
      for (int i = 0; i < n; i++) sum += text[i];
      rows++;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      cd_fail(&r, "step %s: %s", queries[q], sqlite3_errmsg(db));
      sqlite3_close(db);
      return r;
    }
  }
  r.seconds = cd_now() - start;
  r.operations = rows;
  r.checksum = sum;
  sqlite3_close(db);
  return r;
}
