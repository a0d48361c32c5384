import Foundation
internal import LMDB

// Compaction: a store's file made as small as its data, in place. LMDB never shrinks its
// file; pages freed by deletes, rebuilds, upcasts and dropped versions are reused by later
// writes but stay in the file. A compacting copy (`mdb_env_copy2` with `MDB_CP_COMPACT`)
// writes only the pages in use, renumbered; swapping it in for `data.mdb` keeps every byte
// of every database: sequence numbers, identities, idempotency keys, consumer positions.

/// What ``EventStore/compact(at:dropVersionsBefore:droppingRollbackVersion:)`` did.
public struct CompactionReport: Sendable, Hashable {
  /// The data file's size before and after, in bytes.
  public var sizeBefore: Int
  public var sizeAfter: Int
  /// The model versions dropped before the copy.
  public var droppedVersions: [Int]
  /// The time taken, in seconds.
  public var seconds: Double
}

/// Why a compaction or a backup did not happen; the store is unchanged.
public struct MaintenanceError: RemediedError, Sendable, Hashable {
  /// What is wrong, without the remedy.
  public let problem: String
  /// What a user can do, when the refusal can be lifted.
  public let remedy: Remedy?

  init(_ problem: String, remedy: Remedy? = nil) {
    self.problem = problem
    self.remedy = remedy
  }

  /// The whole message (``problem`` and ``remedy``).
  public var message: String { description }
}

extension EventStore {
  /// The directory, inside the store, where a compaction builds its copy.
  static let compactionDirectory = ".compact"

  /// Compacts the store at `path` in place: a compacting copy of it, checked page by page,
  /// replaces its data file in one rename.
  ///
  /// No process may have the store open, this one included: a process that has it open
  /// keeps reading and writing the file it mapped, which the rename leaves behind. That is
  /// checked with the lock every LMDB process holds on `lock.mdb` while it has the store
  /// open (LMDB's `EnvironmentLock`), at the start and again, holding that lock, for the swap;
  /// a writer that came and went while the copy was made is found by the last transaction
  /// of the data file having changed. Killed at any moment, it leaves either the old file
  /// or the new one (the dropped versions, when asked for, are dropped in a transaction of
  /// their own first).
  ///
  /// - Parameters:
  ///   - path: the store's directory.
  ///   - dropVersionsBefore: drop every model version below this one first (its log, its
  ///     projections and its consumers' positions). The active version is never dropped.
  ///   - droppingRollbackVersion: allow dropping the version a rollback would go back to.
  /// - Throws: ``MaintenanceError`` when the store is in use or a version may not be
  ///   dropped; `LMDBError` for a failed copy (a full disk); the store's errors. The store
  ///   is unchanged then, but for the versions dropped.
  public static func compact(
    at path: String, dropVersionsBefore: Int? = nil, droppingRollbackVersion: Bool = false
  ) throws -> CompactionReport {
    return try StoreError.reportingStorage(path: path) {
      let start = ContinuousClock.now
      let scratch = path + "/" + compactionDirectory
      let dataFile = path + "/data.mdb"
      let sizeBefore = try fileSize(dataFile)
      if let other = try EnvironmentLock.otherUser(directory: path) {
        throw MaintenanceError("cannot compact \(path): \(other); stop it first")
      }
      try? FileManager.default.removeItem(atPath: scratch)  // a killed compaction's copy
      try StoreFiles.makePrivateDirectory(scratch)
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      // Refusals first, from a read-only handle: a refused compaction writes nothing.
      let dropping = try EventStore(path: path, options: StoreOptions(readOnly: true)).versions(
        before: dropVersionsBefore, droppingRollbackVersion: droppingRollbackVersion)
      let (copiedAt, end) = try {
        let store = try EventStore(path: path)
        for v in dropping { try store.dropVersion(v) }
        let copiedAt = store.env.info.lastTransaction
        let end = try store.read { try $0.logEnd() }
        try store.copy(to: scratch, compact: true, into: "compacting \(path)")
        return (copiedAt, end)
      }()
      // The store is closed here: its environment is no longer open in this process. The
      // copy is LMDB's own walk of the trees; it is checked as a file (meta pages, length)
      // and opened as a store at the same log end, not read page by page, which would take
      // longer than the copy (`eventtool verify` does that after, if wanted).
      try PageCheck.check(dataFile: scratch + "/data.mdb", full: false)
      guard try EventStore(path: scratch, options: StoreOptions(readOnly: true)).read({ try $0.logEnd() }) == end else {
        throw MaintenanceError("compacting \(path): the copy does not end where the store does; the store is unchanged")
      }
      try? FileManager.default.removeItem(atPath: scratch + "/lock.mdb")
      let key = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
      guard OpenStores.claim(key) else { throw StoreError.alreadyOpen(path: path) }
      defer { OpenStores.release(key) }
      let lock: EnvironmentLock
      do {
        lock = try EnvironmentLock(directory: path)
      } catch let e as EnvironmentInUse {
        throw MaintenanceError(
          "cannot compact \(path): \(e) (it was opened while the copy was made); nothing was changed")
      }
      guard try PageCheck.check(dataFile: dataFile, full: false).transaction == copiedAt else {
        throw MaintenanceError(
          "cannot compact \(path): another process wrote to it while the copy was made; nothing was changed")
      }
      try swapIn(scratch + "/data.mdb", for: dataFile, directory: path)
      try lock.resetLockTable()
      return CompactionReport(
        sizeBefore: sizeBefore, sizeAfter: try fileSize(dataFile), droppedVersions: dropping,
        seconds: Self.seconds(since: start))

    }
  }

  /// Makes `copy` the store's data file: flushed, renamed over `dataFile`, and the
  /// directory flushed so that the rename itself survives a crash.
  private static func swapIn(_ copy: String, for dataFile: String, directory: String) throws {
    try FileSync.flush(copy)
    guard rename(copy, dataFile) == 0 else {
      throw MaintenanceError("cannot rename \(copy) to \(dataFile): \(String(cString: strerror(errno)))")
    }
    try FileSync.flush(directory)
  }

  /// The model versions below `version` (none when `nil`), checked that they may be
  /// dropped.
  private func versions(before version: Int?, droppingRollbackVersion: Bool) throws -> [Int] {
    guard let version else { return [] }
    let (versions, rollbackTarget) = try readStorage { txn in
      var found: [Int] = []
      try txn.forEach(dbs.models) { k, _ in
        if let v = KeyField.u64(k, at: 0), Int(v) < version { found.append(Int(v)) }
        return true
      }
      return (found, try txn.metaNumber(dbs.meta, UpcastKeys(version: model.version).from))
    }
    if versions.contains(model.version) {
      throw MaintenanceError(
        "dropping the versions before \(version) would drop version \(model.version), the active one; nothing was changed"
      )
    }
    if let rollbackTarget, versions.contains(rollbackTarget), !droppingRollbackVersion {
      throw MaintenanceError(
        "dropping the versions before \(version) would drop version \(rollbackTarget), which a rollback goes back to; nothing was changed",
        remedy: .allowDroppingRollbackVersion)
    }
    return versions
  }

  /// Copies the store, naming `what` in the error of a failed copy.
  func copy(to directory: String, compact: Bool, into what: String) throws {
    do {
      try copy(to: directory, compact: compact)
    } catch let e as LMDBError {
      let full = e.code == ENOSPC || e.code == EFBIG || e.code == EIO
      throw MaintenanceError(
        "\(what): writing the copy in \(directory) failed: \(e)\(full ? " (is the disk full?)" : ""); the store is unchanged"
      )
    }
  }

  static func fileSize(_ file: String) throws -> Int {
    guard let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int else {
      throw StoreError.notAStore(path: file, detail: "its size cannot be read")
    }
    return size
  }

  static func seconds(since start: ContinuousClock.Instant) -> Double {
    let d = start.duration(to: .now).components
    return Double(d.seconds) + Double(d.attoseconds) / 1e18
  }
}

/// Flushing a file or a directory to the disk.
enum FileSync {
  static func flush(_ path: String) throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw MaintenanceError("cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw MaintenanceError("cannot flush \(path): \(String(cString: strerror(errno)))") }
  }
}
