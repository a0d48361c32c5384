import Foundation
internal import LMDB

// The log interface: what migration and replication need of a store, and no more — read
// commit records from a commit number, append records made elsewhere byte for byte with
// their projections, keep named checkpoints in the same transaction, and create, switch
// and drop model versions atomically.

/// A commit record as the log holds it: its bytes, checksum verified, and its place.
///
/// Records travel as they are (to another store, to a replication stream): their bytes
/// carry the commit's number, first sequence, time, model version, metadata and events,
/// under a CRC-32C (Docs/store-layout.md).
public struct CommitRecord: Sendable, Hashable {
  public let number: UInt64
  public let firstSequence: UInt64
  public let lastSequence: UInt64
  public let modelVersion: Int
  /// The record, byte for byte.
  public let bytes: [UInt8]
  /// Whether the record is a truncated log's base (``CommitMetadata/base``): it stands for
  /// every commit up to its number, and starts its log.
  public let isBase: Bool

  /// Checks a record received from elsewhere: its checksum and its header.
  ///
  /// - Throws: ``CorruptionError`` naming what does not hold.
  public init(bytes: [UInt8]) throws {
    try self.init(bytes: bytes, context: "commit record")
  }

  /// Reads the header of `bytes`, checking the checksum; `context` names the record in errors.
  private init(bytes: [UInt8], context: String) throws {
    let (header, last) = try CommitCodec.read(bytes, context: context) { ($0.header, $0.lastSequence) }
    self.isBase = header.metadata.base != nil
    self.number = header.number
    self.firstSequence = header.firstSequence
    self.lastSequence = last
    self.modelVersion = header.modelVersion
    self.bytes = bytes
  }

  /// The commit with its events.
  public func decoded() throws -> Commit {
    try CommitCodec.read(bytes, context: "commit record \(number)") { reader in
      var commit = reader.header
      while let e = try reader.next() { commit.events.append(e) }
      return commit
    }
  }
}

/// A named checkpoint written in the same transaction as commits: a follower's position, a
/// replica's place in its stream, a migration's progress.
///
/// Either both land or neither does.
public struct Checkpoint: Sendable, Hashable {
  public var name: String
  public var value: [UInt8]

  public init(name: String, value: [UInt8]) {
    self.name = name
    self.value = value
  }

  /// The longest name, in bytes of UTF-8 (LMDB's keys are at most 511 bytes).
  public static let maxNameLength = 200

  /// The `meta` key that holds the checkpoint `name`.
  static func key(_ name: String) throws -> String {
    guard !name.isEmpty, name.utf8.count <= maxNameLength else {
      throw StoreError.invalidCheckpointName(name, maxLength: maxNameLength)
    }
    return "checkpoint." + name
  }
}

extension EventStore {
  // MARK: - Reading records

  /// Reads commit records in order, starting with commit `number` (1 is the first).
  ///
  /// At most `maxCommits` are read, and no more once `maxBytes` are gathered (always at
  /// least one record when there is one); none past the end of the log. Each record's
  /// checksum is verified.
  ///
  /// ```swift
  /// var next: UInt64 = 1
  /// while case let records = try store.commitRecords(from: next), !records.isEmpty {
  ///   try replica.appendCommitRecords(records)
  ///   next = records[records.count - 1].number + 1
  /// }
  /// ```
  ///
  /// - Throws: ``CorruptionError`` or ``ErrorCode/corrupt``, naming the log entry whose
  ///   checksum or place fails.
  public func commitRecords(
    from number: UInt64, version: Int? = nil, maxCommits: Int = 1_000, maxBytes: Int = 16 << 20
  ) throws -> [CommitRecord] {
    let (dbs, model) = try databases(version: version)
    return try readStorageHandle { txn in
      let reader = GraphReader(txn: txn, dbs: dbs, model: model)
      var number = number
      if let b = try reader.logBase(), number < b.number {
        // From the start, a truncated log starts with its base; from a commit it replaced,
        // the commits that follow are gone.
        guard number <= 1 else { throw StoreError.historyTruncated(b.firstSequence, base: b.base) }
        number = b.number
      }
      guard let first = try reader.firstSequence(ofCommit: number) else { return [] }
      var records: [CommitRecord] = []
      var bytes = 0
      var expected = number
      try txn.forEach(dbs.log, from: StoreKey.sequence(first)) { key, value in
        let record = try CommitRecord(verified: [UInt8](value), key: KeyField.u64(key, at: 0) ?? 0)
        guard record.number == expected else {
          throw StoreError.corrupt(
            "log entry \(record.firstSequence) holds commit \(record.number) where commit \(expected) was expected")
        }
        records.append(record)
        bytes += value.count
        expected += 1
        return records.count < maxCommits && bytes < maxBytes
      }
      return records
    }
  }

  // MARK: - Appending records made elsewhere

  /// Appends commit records made elsewhere (another store's log, a replication stream),
  /// byte for byte, with their projections, and `checkpoint` when given, in one transaction.
  ///
  /// Each record must be of the model version it is appended to — `version`, or the
  /// version this handle was opened at — and follow that log's end exactly (its number one
  /// more than the last commit's, its first sequence one more than the last event's): the
  /// log stays an exact, gap-free copy. Appending to the handle's own version needs it to
  /// be still the active one; another version (a replica following an upcast) may be
  /// appended to whether active or not. A read replica's store takes records this way
  /// while it refuses every other write.
  ///
  /// - Returns: what each record was given in the log (their own numbers and sequences).
  /// - Throws: ``CorruptionError`` for a record whose checksum fails; ``ErrorCode/corrupt``
  ///   for one of another model version, or out of place;
  ///   ``ErrorCode/unknownModelVersion``; nothing is written then.
  @discardableResult
  public func appendCommitRecords(_ records: [CommitRecord], version: Int? = nil, checkpoint: Checkpoint? = nil)
    throws -> [CommitInfo]
  {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    let (target, targetModel) = try databases(version: version)
    let infos = try commits.run { batch, _ in
      try batch.checkNoRebuild()
      if target.version == model.version { try batch.checkActive() }
      let into = target.version == model.version ? batch : batch.writing(to: target, model: targetModel)
      let projector = Projector(txn: into.handle, dbs: target, model: targetModel)
      var infos: [CommitInfo] = []
      infos.reserveCapacity(records.count)
      for r in records { infos.append(try into.appendRecord(r.bytes, projector: projector)) }
      try projector.writeObjects()
      if let checkpoint { try batch.setCheckpoint(checkpoint) }
      return infos
    }
    return infos
  }

  // MARK: - Checkpoints

  /// The value of the checkpoint `name`, `nil` when none was written.
  public func checkpoint(named name: String) throws -> [UInt8]? {
    let key = try Checkpoint.key(name)
    return try readStorage { try $0.get(dbs.meta, key: key) }
  }

  /// Writes a checkpoint alone (with a commit, use ``Transaction/setCheckpoint(_:)`` or
  /// ``appendCommitRecords(_:version:checkpoint:)``).
  public func setCheckpoint(_ checkpoint: Checkpoint) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try commits.run { batch, _ in try batch.setCheckpoint(checkpoint) }
  }

  // MARK: - Versions

  /// The model versions the store holds, in order.
  public func versions() throws -> [Int] {
    try readStorage { txn in
      var versions: [Int] = []
      try txn.forEach(dbs.models, from: BigEndianKey(UInt64(0))) { k, _ in
        if let v = KeyField.u64(k, at: 0) { versions.append(Int(v)) }
        return true
      }
      return versions
    }
  }

  /// Adds model version `model.version` with an empty log, beside the active one; with
  /// `activate`, it becomes the active version in the same transaction (with `checkpoint`
  /// when given).
  ///
  /// - Throws: ``ErrorCode/versionExists`` when the store holds that version already.
  public func installVersion(_ model: Model, activate: Bool = false, checkpoint: Checkpoint? = nil) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try commits.run { batch, _ in
      if let checkpoint { try batch.setCheckpoint(checkpoint) }
      let key = BigEndianKey(UInt64(model.version))
      guard try !batch.handle.contains(dbs.models, key: key) else {
        throw StoreError.versionExists(model.version)
      }
      try dbs.putModel(model, batch.handle)
      for name in StoreDatabases.versionedNames {
        _ = try batch.handle.openDatabase(StoreDatabases.name(name, version: model.version), create: true)
      }
      if activate { try batch.handle.setActiveVersion(model.version, in: dbs.meta) }
    }
  }

  /// Makes `version` the active one, atomically.
  ///
  /// This handle keeps its model, and its writes are refused from then on
  /// (``ErrorCode/versionChanged``): open the store again to work at
  /// the new version. `checkpoint`, when given, is written in the same transaction.
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion`` when the store does not hold it.
  public func switchVersion(to version: Int, checkpoint: Checkpoint? = nil) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try commits.run { batch, _ in
      if let checkpoint { try batch.setCheckpoint(checkpoint) }
      try Self.requireVersion(version, in: batch.handle, dbs: dbs)
      try batch.handle.setActiveVersion(version, in: dbs.meta)
    }
  }

  /// Removes a version that is not active: its model, its log and its projections, in one
  /// transaction.
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion``, or ``ErrorCode/versionInUse``
  ///   for the active version or the one this handle was opened at.
  public func dropVersion(_ version: Int) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try commits.run { batch, _ in
      let active = try batch.handle.activeVersion(in: dbs.meta)
      guard active != version else {
        throw StoreError.versionInUse(version, reason: "it is the active version")
      }
      guard version != model.version else {
        throw StoreError.versionInUse(version, reason: "this handle was opened at it; open the store again to drop it")
      }
      try Self.requireVersion(version, in: batch.handle, dbs: dbs)
      for name in StoreDatabases.versionedNames + ["consumers"] {
        if let db = try batch.handle.openDatabase(StoreDatabases.name(name, version: version), create: false) {
          try batch.handle.drop(db)
        }
      }
      _ = try batch.handle.delete(dbs.models, key: BigEndianKey(UInt64(version)))
      _ = try batch.handle.delete(dbs.meta, key: StoreDatabases.modelHashKey(version))
    }
    otherVersions.withLock { $0[version] = nil }
  }

  private static func requireVersion(_ version: Int, in txn: WriteHandle, dbs: StoreDatabases) throws {
    guard version > 0, try txn.contains(dbs.models, key: BigEndianKey(UInt64(version))),
      try txn.openDatabase(StoreDatabases.name("log", version: version), create: false) != nil
    else { throw StoreError.unknownModelVersion(version) }
  }
}

extension CommitRecord {
  /// A record read from the log at `key`, its checksum and key verified.
  init(verified bytes: [UInt8], key: UInt64) throws {
    try self.init(bytes: bytes, context: "log entry \(key)")
    guard firstSequence == key else {
      throw StoreError.corrupt("log entry \(key) holds a commit starting at sequence \(firstSequence)")
    }
  }
}

extension CommitBatch {
  /// Appends a commit record made elsewhere, byte for byte, applying its events through
  /// `projector` (whose object records the caller writes when the batch ends).
  func appendRecord(_ bytes: [UInt8], projector: Projector) throws -> CommitInfo {
    let end = try currentLogEnd()
    let (header, last) = try CommitCodec.read(bytes, context: "commit record \(end.commit + 1)") { reader in
      let h = reader.header
      guard h.modelVersion == model.version else {
        throw StoreError.corrupt(
          "commit record \(h.number) is of model version \(h.modelVersion); the store is at version \(model.version)")
      }
      try Replay.checkOrder(h, key: h.firstSequence, previous: (end.commit, end.sequence))
      try Replay.project(&reader, projector)
      return (h, reader.lastSequence)
    }
    try handle.put(dbs.log, key: StoreKey.sequence(header.firstSequence), value: bytes, flags: .append)
    logEnd = LogEnd(commit: header.number, sequence: last)
    appendedThrough = last
    appendedCommits += 1
    appendedEvents += Int(last - header.firstSequence + 1)
    let time = Date(timeIntervalSince1970: Double(CommitCodec.milliseconds(header.time)) / 1000)
    let info = CommitInfo(number: header.number, firstSequence: header.firstSequence, lastSequence: last, time: time)
    try observer?.appended(info, of: nil, in: self)
    return info
  }

  /// Writes a named checkpoint in this transaction.
  func setCheckpoint(_ checkpoint: Checkpoint) throws {
    try handle.put(dbs.meta, key: try Checkpoint.key(checkpoint.name), value: checkpoint.value)
  }

  /// A checkpoint as this transaction sees it.
  func checkpoint(named name: String) throws -> [UInt8]? {
    try handle.get(dbs.meta, key: try Checkpoint.key(name))
  }
}

extension Transaction {
  /// Writes a named checkpoint with this commit: both land or neither does (a consumer's
  /// position saved with the commit its work made).
  public func setCheckpoint(_ checkpoint: Checkpoint) throws {
    try checkOpen()
    markWritten()
    try batch.setCheckpoint(checkpoint)
  }

  /// The checkpoint `name` as this transaction sees it.
  public func checkpoint(named name: String) throws -> [UInt8]? {
    try checkOpen()
    return try batch.checkpoint(named: name)
  }
}

extension GraphReader {
  /// The first sequence of commit `number`, `nil` when the log has no such commit.
  ///
  /// The log is keyed by sequence, and numbers and sequences grow together: a binary search
  /// over sequences, each probe a seek to the first commit at or after a sequence, finds it
  /// in O(log n) seeks.
  ///
  /// A truncated log has no commit before its base's number (the base has that number).
  func firstSequence(ofCommit number: UInt64) throws -> UInt64? {
    let end = try logEnd()
    guard number >= 1, number <= end.commit else { return nil }
    if let b = try logBase(), number <= b.number { return number == b.number ? b.firstSequence : nil }
    // The commit's first sequence lies in lo...hi.
    var lo: UInt64 = 1
    var hi = end.sequence
    return try txn.withCursor(dbs.log) { cursor in
      while lo <= hi {
        let mid = lo + (hi - lo) / 2
        guard try cursor.seek(StoreKey.sequence(mid)) else {
          hi = mid - 1  // no commit starts at or after mid
          continue
        }
        let (found, start) = try cursor.withCurrent { k, v in
          let key = KeyField.u64(k, at: 0) ?? 0
          return (try CommitCodec.decodeHeader(v, context: "log entry \(key)").number, key)
        }
        if found == number { return start }
        if found < number { lo = start + 1 } else { hi = mid - 1 }
      }
      throw StoreError.corrupt("the log has no commit \(number), although its last commit is \(end.commit)")
    }
  }
}

extension EventStore {
  // MARK: - Copies

  /// Writes a consistent copy of the store into the existing, empty directory `directory`,
  /// while other writers keep committing (the copy is the store as of one commit).
  ///
  /// The directory is made its owner's alone (mode 0700) and the copy's data file is too
  /// (0600), as a store's are.
  ///
  /// - Parameters:
  ///   - directory: where the copy goes: an existing, empty directory.
  ///   - compact: leave out free pages, renumbering the copy's pages (LMDB's compacting
  ///     copy).
  public func copy(to directory: String, compact: Bool = false) throws {
    try StoreFiles.makePrivateDirectory(directory)
    try env.copy(to: directory, compact: compact, mode: Int32(StoreFiles.fileMode))
  }
}
