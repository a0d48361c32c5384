internal import CSQLite
import Foundation

// THE C BOUNDARY of this module: every call into SQLite's C API is in this file.
//
// Pointers: SQLite hands back text as `const unsigned char *`, read here once with
// `String(cString:)` (a copy, while the statement row is current), and error messages the
// same way. Nothing else here touches a pointer: blobs are selected as `hex(column)` text
// by the callers, so no buffer is read through a raw pointer, and no value is bound
// (statements are built from names the schema gave, quoted).

/// A SQLite database opened through the C API: read-only for a Core Data store, or
/// writable for the tests and benchmark that build one.
final class SQLiteDatabase {
  private let db: OpaquePointer
  let path: String

  /// Opens an existing database read-only after checking it starts as a SQLite file.
  ///
  /// - Throws: ``CoreDataError`` naming the file: missing, not SQLite, cannot be opened.
  init(readOnly path: String) throws(CoreDataError) {
    self.path = path
    let header: [UInt8]
    do {
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { try? handle.close() }
      header = [UInt8](try handle.read(upToCount: 16) ?? Data())
    } catch {
      throw CoreDataError(file: path, "cannot be read (\((error as NSError).localizedDescription))")
    }
    guard header == Array("SQLite format 3\0".utf8) else {
      throw CoreDataError(file: path, "not a SQLite database (it does not start with 'SQLite format 3')")
    }
    db = try Self.open(path, SQLITE_OPEN_READONLY)
  }

  /// Creates (or opens) a database for writing.
  init(writing path: String) throws(CoreDataError) {
    self.path = path
    db = try Self.open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
  }

  private static func open(_ path: String, _ flags: Int32) throws(CoreDataError) -> OpaquePointer {
    var handle: OpaquePointer? = nil
    let rc = sqlite3_open_v2(path, &handle, flags, nil)
    guard rc == SQLITE_OK, let h = handle else {
      let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
      sqlite3_close(handle)
      throw CoreDataError(file: path, "cannot be opened as SQLite: \(message)")
    }
    // A store another process is writing answers SQLITE_BUSY at once: reported, not waited on.
    sqlite3_busy_timeout(h, 0)
    return h
  }

  deinit { sqlite3_close(db) }

  /// Runs statements that return no rows.
  func execute(_ sql: String) throws(CoreDataError) {
    let rc = sqlite3_exec(db, sql, nil, nil, nil)
    guard rc == SQLITE_OK else { throw failure(rc, "running SQL") }
  }

  /// A prepared statement over `sql`.
  func query(_ sql: String) throws(CoreDataError) -> SQLiteRows {
    var statement: OpaquePointer? = nil
    let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
    guard rc == SQLITE_OK, let s = statement else {
      sqlite3_finalize(statement)
      throw failure(rc, "reading (\(sql.prefix(80)))")
    }
    return SQLiteRows(statement: s, database: self)
  }

  func failure(_ rc: Int32, _ doing: String) -> CoreDataError {
    let message = String(cString: sqlite3_errmsg(db))
    let hint =
      rc & 0xFF == SQLITE_BUSY || rc & 0xFF == SQLITE_LOCKED
      ? " (another process holds a lock on it: close the app using the store and retry)"
      : rc & 0xFF == SQLITE_CORRUPT || rc & 0xFF == SQLITE_NOTADB ? " (the file is damaged or truncated)" : ""
    return CoreDataError(file: path, "SQLite error \(rc) \(doing): \(message)\(hint)")
  }
}

/// The rows of a prepared statement, one at a time.
final class SQLiteRows {
  private let statement: OpaquePointer
  private let database: SQLiteDatabase

  fileprivate init(statement: OpaquePointer, database: SQLiteDatabase) {
    self.statement = statement
    self.database = database
  }

  deinit { sqlite3_finalize(statement) }

  /// Moves to the next row; `false` at the end.
  func next() throws(CoreDataError) -> Bool {
    let rc = sqlite3_step(statement)
    if rc == SQLITE_ROW { return true }
    if rc == SQLITE_DONE { return false }
    throw database.failure(rc, "reading rows")
  }

  /// The storage class of a column of the current row.
  func kind(_ i: Int32) -> SQLiteKind {
    switch sqlite3_column_type(statement, i) {
    case SQLITE_INTEGER: .integer
    case SQLITE_FLOAT: .real
    case SQLITE_TEXT: .text
    case SQLITE_BLOB: .blob
    default: .null
    }
  }

  func int(_ i: Int32) -> Int64 { sqlite3_column_int64(statement, i) }

  func double(_ i: Int32) -> Double { sqlite3_column_double(statement, i) }

  /// The column as text (a copy); "" for NULL.
  func text(_ i: Int32) -> String {
    guard let p = sqlite3_column_text(statement, i) else { return "" }
    return String(cString: p)
  }
}

/// SQLite's storage classes.
enum SQLiteKind: Sendable, Equatable {
  case null, integer, real, text, blob
}
