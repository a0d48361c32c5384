import EventGraphLocking
import Foundation
internal import LMDB

// What replication needs of a store beyond the log interface: its part (primary, read
// replica, fenced former primary), the active version and other versions' logs, and a way
// to hold a commit's acknowledgement until it is replicated.

/// A store's part in replication, kept in its `meta` database.
///
/// A **replica** takes commit records only through
/// ``EventStore/appendCommitRecords(_:version:checkpoint:)`` and refuses every other write
/// with ``ErrorCode/replica``; a **fenced** store was the primary until another store
/// took over the stream, and refuses writes with ``ErrorCode/fenced``.
public struct ReplicationRole: Sendable, Hashable {
  public enum Kind: String, Sendable, Hashable {
    case primary, replica, fenced
  }
  public var kind: Kind
  /// The replication stream's name.
  public var stream: String
  /// Why a store was fenced (who took over, at which stream sequence); empty otherwise.
  public var detail: String

  public init(_ kind: Kind, stream: String, detail: String = "") {
    self.kind = kind
    self.stream = stream
    self.detail = detail
  }

  /// The part in words, as errors name it: `the replica of stream 'BOOK'`.
  public var description: String { "the \(kind.rawValue) of stream '\(stream)'" }

  /// The stored form: kind, stream and detail on three lines.
  var stored: [UInt8] { Array("\(kind.rawValue)\n\(stream)\n\(detail)".utf8) }

  init?(stored bytes: [UInt8]) {
    let parts = String(decoding: bytes, as: UTF8.self).split(
      separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3, let kind = Kind(rawValue: String(parts[0])) else { return nil }
    self.init(kind, stream: String(parts[1]), detail: String(parts[2]))
  }
}

/// Decides when a commit of ``EventStore/commit(expecting:idempotencyKey:metadata:_:)`` may
/// return to its caller once it is durable in the store: replication's quorum mode holds it
/// until the stream has stored it.
public protocol CommitAcknowledging: Sendable {
  /// Returns when `commit`, of model version `version`, may be acknowledged; throws when it
  /// never will (the caller then gets the error, although the commit is in the local store).
  func acknowledge(_ commit: CommitInfo, version: Int) async throws
}

/// A version's databases and model.
struct VersionDatabases: Sendable {
  let dbs: StoreDatabases
  let model: Model
}

extension EventStore {
  // MARK: - Role

  /// The store's part in replication; `nil` for a store on its own.
  public func replicationRole() throws -> ReplicationRole? {
    try readStorage { try $0.get(dbs.meta, key: MetaKey.role) }.flatMap(ReplicationRole.init(stored:))
  }

  /// Sets (or with `nil` removes) the store's part in replication, with `checkpoint` in the
  /// same transaction.
  public func setReplicationRole(_ role: ReplicationRole?, checkpoint: Checkpoint? = nil) throws {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    try commits.run { batch, _ in
      if let role {
        try batch.handle.put(dbs.meta, key: MetaKey.role, value: role.stored)
      } else {
        _ = try batch.handle.delete(dbs.meta, key: MetaKey.role)
      }
      if let checkpoint { try batch.setCheckpoint(checkpoint) }
    }
  }

  // MARK: - Versions

  /// The active model version, as the store holds it now (another handle or process may
  /// have switched it since this one was opened at ``model``).
  public func activeVersion() throws -> Int {
    guard let active = try readStorage({ try $0.activeVersion(in: dbs.meta) }) else {
      throw StoreError.corrupt("the meta database names no active model version")
    }
    return active
  }

  /// The model of `version`: the active one, or one the store was upcast from or to, or
  /// installed (``versions()`` lists them).
  ///
  /// - Throws: ``ErrorCode/unknownModelVersion`` for a version the store never held.
  public func model(version: Int) throws -> Model {
    if version == model.version { return model }
    if let known = otherVersions.withLock({ $0[version] }) { return known.model }
    guard version > 0,
      let document = try readStorage({ try $0.get(dbs.models, key: BigEndianKey(UInt64(version))) })
    else { throw StoreError.unknownModelVersion(version) }
    return try Model(json: document, file: "\(path) (stored model v\(version))")
  }

  /// The databases and model of `version` (this handle's own when `nil`), opened once.
  func databases(version: Int?) throws -> (StoreDatabases, Model) {
    guard let version, version != model.version else { return (dbs, model) }
    if let known = otherVersions.withLock({ $0[version] }) { return (known.dbs, known.model) }
    guard version > 0,
      let document = try readStorage({ try $0.get(dbs.models, key: BigEndianKey(UInt64(version))) }),
      try readStorage({ try $0.openDatabase(StoreDatabases.name("log", version: version)) }) != nil,
      var opened = try StoreDatabases.open(env, version: version, create: false)
    else { throw StoreError.unknownModelVersion(version) }
    opened.keyring = dbs.keyring
    let found = VersionDatabases(
      dbs: opened, model: try Model(json: document, file: "\(path) (stored model v\(version))"))
    otherVersions.withLock { $0[version] = found }
    return (found.dbs, found.model)
  }

  // MARK: - Acknowledgement

  /// Makes the service's commits wait for `acknowledger` before they return (replication's
  /// quorum mode); `nil` returns them once they are durable here.
  public func setAcknowledger(_ acknowledger: (any CommitAcknowledging)?) {
    self.acknowledger.withLock { $0 = acknowledger }
  }

  /// Waits for the acknowledger, if any, to let `info` return.
  func acknowledge(_ info: CommitInfo) async throws {
    guard let acknowledger = acknowledger.withLock({ $0 }) else { return }
    try await acknowledger.acknowledge(info, version: model.version)
  }
}
