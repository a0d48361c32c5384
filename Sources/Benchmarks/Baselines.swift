import CBaselines
// Imported for linking only. A C target's #include does not autolink, and no
// other Swift module of the package imports CSQLite, so without these the
// executable would miss -lsqlite3 (and -llmdb, were LMDB not linked anyway).
internal import CLMDB
internal import CSQLite

// The C baselines (raw LMDB, SQLite) behind thin Swift calls. Each runs one
// workload in C, times only the workload itself with CLOCK_MONOTONIC, and
// comes back as a `Measurement`, so the Swift store's figure for the same
// workload can be reported as a ratio of it. See CBaselines.h for the exact
// contract of each workload.

// MARK: - Results

/// One measured run of one workload.
///
/// `rate` is operations per second. The optional figures are filled by the C
/// baselines and may be left at zero by Swift measurements.
struct Measurement: Sendable {
  /// Operations performed: events written, commits, rows or records read.
  let operations: Int
  /// Wall time of the timed interval, in seconds.
  let seconds: Double
  /// Payload bytes handed to or read from the engine.
  var bytes: Int = 0
  /// Disk space allocated by the store's files after the run.
  var fileBytes: Int = 0
  /// Scans: the sum of every value byte read (equal for equal data).
  var checksum: UInt64 = 0

  /// The two measurements' operations and times added up (rounds of one workload).
  static func += (total: inout Measurement, round: Measurement) {
    total = Measurement(operations: total.operations + round.operations, seconds: total.seconds + round.seconds)
  }

  /// Operations per second; 0 when nothing was timed.
  var rate: Double { seconds > 0 ? Double(operations) / seconds : 0 }
  /// Wall time per operation, in microseconds; 0 when nothing was done.
  var microsecondsPerOperation: Double {
    operations > 0 ? seconds * 1e6 / Double(operations) : 0
  }
}

/// A C baseline failed; `message` is the C side's explanation.
struct BaselineError: Error, CustomStringConvertible {
  /// Which baseline failed, such as "lmdb batched puts".
  let workload: String
  /// What the C code reported: the failing call and its error text.
  let message: String

  var description: String { "\(workload): \(message)" }
}

/// The two timed phases of the SQLite schema-migration peer.
struct UpcastPeerMeasurement: Sendable {
  /// Filling `address_book`: one operation per person.
  let fill: Measurement
  /// The migration transaction: one operation per `phone_book` row created.
  let migration: Measurement
}

/// One person of the deterministic address book migrated by the upcast peer.
///
/// The Swift store's migration benchmark builds its data from these, so both
/// sides migrate exactly the same people. `nil` is SQL NULL; "" is an empty
/// phone, which the migration skips as it skips NULL.
struct UpcastPerson: Sendable, Equatable {
  let id: Int
  let firstName: String
  let lastName: String
  let phone1: String?
  let phone2: String?
}

// MARK: - Baselines

/// The C baselines, one static function per workload.
///
/// Every writer empties and reuses `directory`; a scan reads what the matching
/// writer left there:
///
///     let dir = try temporaryDirectory(prefix: "lmdb")
///     let puts = try Baselines.lmdbBatchedPuts(in: dir, events: 1_000_000, append: true)
///     let scan = try Baselines.lmdbCursorScan(in: dir)
enum Baselines {
  /// An event's value: a 100-byte string.
  static let valueSize = 100
  /// A batch: 100 objects of 1 insert + 9 attribute sets.
  static let eventsPerTransaction = 1_000

  // MARK: Raw LMDB

  /// Appends `events` values to one LMDB database, `eventsPerTransaction` per
  /// durable write transaction, under 8-byte big-endian sequence keys.
  ///
  /// - Parameters:
  ///   - append: pass `MDB_APPEND` with every put.
  /// - Throws: `BaselineError` with the failing LMDB call.
  static func lmdbBatchedPuts(
    in directory: String, events: Int, eventsPerTransaction: Int = Baselines.eventsPerTransaction,
    valueSize: Int = Baselines.valueSize, append: Bool
  ) throws -> Measurement {
    try measurement(
      append ? "lmdb batched puts (append)" : "lmdb batched puts",
      eg_lmdb_batched_puts(
        directory, Int64(events), Int64(eventsPerTransaction), Int64(valueSize), append))
  }

  /// `commits` write transactions of one put each, durable: bound by fsync.
  ///
  /// - Throws: `BaselineError` with the failing LMDB call.
  static func lmdbDurableCommits(
    in directory: String, commits: Int, valueSize: Int = Baselines.valueSize
  ) throws -> Measurement {
    try measurement(
      "lmdb durable commits", eg_lmdb_durable_commits(directory, Int64(commits), Int64(valueSize)))
  }

  /// `commits` one-put transactions without fsync (`MDB_NOSYNC`): a commit's CPU cost.
  static func lmdbUnsyncedCommits(
    in directory: String, commits: Int, valueSize: Int = Baselines.valueSize
  ) throws -> Measurement {
    try measurement(
      "lmdb unsynced commits", eg_lmdb_unsynced_commits(directory, Int64(commits), Int64(valueSize)))
  }

  /// Walks every record left by `lmdbBatchedPuts` with a cursor in one read
  /// transaction, reading every value byte into `checksum`.
  ///
  /// - Throws: `BaselineError`, e.g. when `directory` holds no environment.
  static func lmdbCursorScan(in directory: String) throws -> Measurement {
    try measurement("lmdb cursor scan", eg_lmdb_cursor_scan(directory))
  }

  // MARK: SQLite peer

  /// The SQLite peer of a batch of the store (WAL, `synchronous=FULL`):
  /// per transaction `eventsPerTransaction` event rows, one state row and one
  /// history row per object of 10 events.
  ///
  /// - Throws: `BaselineError`; also when `eventsPerTransaction` is not a
  ///   multiple of 10.
  static func sqliteBatched(
    in directory: String, events: Int, eventsPerTransaction: Int = Baselines.eventsPerTransaction,
    valueSize: Int = Baselines.valueSize
  ) throws -> Measurement {
    try measurement(
      "sqlite batched",
      eg_sqlite_batched(directory, Int64(events), Int64(eventsPerTransaction), Int64(valueSize)))
  }

  /// `commits` SQLite transactions of one event row, one state-row upsert and
  /// one history row each, every one synced to the WAL.
  ///
  /// - Throws: `BaselineError` with the failing SQLite call.
  static func sqliteDurableCommits(
    in directory: String, commits: Int, valueSize: Int = Baselines.valueSize
  ) throws -> Measurement {
    try measurement(
      "sqlite durable commits",
      eg_sqlite_durable_commits(directory, Int64(commits), Int64(valueSize)))
  }

  /// Reads every event row left by `sqliteBatched`, every value byte.
  ///
  /// - Throws: `BaselineError`, e.g. when `directory` holds no database.
  static func sqliteScan(in directory: String) throws -> Measurement {
    try measurement("sqlite scan", eg_sqlite_scan(directory))
  }

  // MARK: SQLite schema migration peer

  /// Fills an `address_book` of `people` (see `upcastPerson(_:)`) and then
  /// moves phone1/phone2 into a new `phone_book` table in one SQL
  /// transaction; the two phases are timed separately.
  ///
  /// - Throws: `BaselineError` naming the failing statement.
  static func sqliteUpcastPeer(
    in directory: String, people: Int, peoplePerTransaction: Int = 10_000
  ) throws -> UpcastPeerMeasurement {
    let result = eg_sqlite_upcast_peer(directory, Int64(people), Int64(peoplePerTransaction))
    return UpcastPeerMeasurement(
      fill: try measurement("sqlite upcast peer", result.fill),
      migration: try measurement("sqlite upcast peer", result.migration))
  }

  /// Person `id` (1-based) of the address book the upcast peer migrates.
  static func upcastPerson(_ id: Int) -> UpcastPerson {
    var person = eg_person()
    eg_upcast_person(Int64(id), &person)
    return UpcastPerson(
      id: id,
      firstName: string(fromCArray: person.first_name),
      lastName: string(fromCArray: person.last_name),
      phone1: person.has_phone1 ? string(fromCArray: person.phone1) : nil,
      phone2: person.has_phone2 ? string(fromCArray: person.phone2) : nil)
  }

  // MARK: Conversion

  static func measurement(_ workload: String, _ result: eg_result) throws -> Measurement {
    guard result.operations >= 0 else {
      throw BaselineError(workload: workload, message: string(fromCArray: result.message))
    }
    return Measurement(
      operations: Int(result.operations), seconds: result.seconds, bytes: Int(result.bytes),
      fileBytes: Int(result.file_bytes), checksum: result.checksum)
  }
}

/// Removes `directory` and everything in it; a missing directory is fine.
///
/// - Throws: `BaselineError` when something could not be removed.
func removeDirectory(_ directory: String) throws {
  let result = eg_remove_directory(directory)
  guard result.operations >= 0 else {
    throw BaselineError(
      workload: "remove \(directory)", message: string(fromCArray: result.message))
  }
}

/// Decodes a NUL-terminated C `char` array, which Swift imports as a tuple.
private func string<Tuple>(fromCArray tuple: Tuple) -> String {
  // SAFETY: the bytes are a copy of the tuple, read only inside the closure.
  withUnsafeBytes(of: tuple) { bytes in
    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
  }
}
