import Foundation
internal import LMDB

/// What ``EventStore/backup(to:compact:progress:)`` wrote and found.
public struct BackupReport: Sendable, Hashable {
  public var directory: String
  /// The size of the copy's data file, in bytes.
  public var size: Int
  /// The copy's log: its last commit and last event.
  public var commits: UInt64
  public var events: UInt64
  /// The verification of the copy, opened on its own.
  public var verification: VerifyReport
  /// The time taken, in seconds, copy and verification together.
  public var seconds: Double
}

extension EventStore {
  /// The storage library's name and version, for `eventtool --version`.
  public static var storageLibraryVersion: String { Environment.libraryVersion }

  /// Writes a verified copy of the store into `directory` while writers keep committing.
  ///
  /// `directory` is created when missing; it must be empty. Writers in this process and
  /// others go on: the copy is the store as of one commit. The copy is then opened on its
  /// own, as a store, and verified (every page and checksum, and a replay of its log
  /// against its projections).
  ///
  /// A copy that fails to be written (a full disk) is removed. The copy's files, its
  /// directory and, when it was made here, the directory's parent (when it may be read) are
  /// synced before the copy is opened: a returned backup survives a power cut.
  ///
  /// - Parameters:
  ///   - directory: where the copy goes: missing or empty.
  ///   - compact: leave out the free pages (LMDB's compacting copy), which makes a smaller
  ///     copy at the cost of renumbering its pages.
  ///   - progress: events verified so far.
  /// - Throws: ``MaintenanceError`` when `directory` holds anything or the copy cannot be
  ///   written; the copy's errors when it does not open.
  public func backup(to directory: String, compact: Bool = false, progress: (Int) -> Void = { _ in }) throws
    -> BackupReport
  {
    let start = ContinuousClock.now
    var isDirectory: ObjCBool = false
    let existed = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
    if existed {
      guard isDirectory.boolValue, (try FileManager.default.contentsOfDirectory(atPath: directory)).isEmpty else {
        throw MaintenanceError("cannot back up into \(directory): it exists and is not an empty directory")
      }
    } else {
      try StoreFiles.makePrivateDirectory(directory)
    }
    do {
      try copy(to: directory, compact: compact, into: "backing up \(path)")
      try FileSync.flush(directory + "/data.mdb")
      // The wrapped subject keys, after the data: every key the copy's commits were sealed
      // with is in the file by then, and one erased since is all zeros.
      if dbs.keyring != nil {
        let keys = "/" + Keyring.fileName
        try FileManager.default.copyItem(atPath: path + keys, toPath: directory + keys)
        try FileSync.flush(directory + keys)
      }
      // The files' names, and the directory's own when it was made here: without these a
      // power cut after the backup returned could leave the data on the disk and no file
      // that names it (found by PowerLossTests). The parent is flushed when it can be
      // opened: a parent this user may enter but not read is no reason to throw a good
      // copy away.
      try FileSync.flush(directory)
      if !existed { try? FileSync.flush(URL(fileURLWithPath: directory).deletingLastPathComponent().path) }
    } catch {
      if existed {
        for name in ["data.mdb", "lock.mdb", Keyring.fileName] {
          try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
      } else {
        try? FileManager.default.removeItem(atPath: directory)
      }
      throw error
    }
    let copy = try EventStore(path: directory, options: StoreOptions(readOnly: true, checkPages: true))
    let end = try copy.read { try $0.logEnd() }
    let verification = try copy.verify(progress: progress)
    return BackupReport(
      directory: directory, size: try Self.fileSize(directory + "/data.mdb"), commits: end.commit,
      events: end.sequence, verification: verification, seconds: Self.seconds(since: start))
  }
}
