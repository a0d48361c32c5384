import EventGraphLocking
import Foundation
internal import LMDB

/// A projection with its databases opened.
struct OpenProjection: Sendable {
  let projection: any Projection
  /// `projection.NAME.vN`.
  let db: Database
  /// `consumers.vN`, where the position is kept.
  let consumers: Database

  var positionKey: String { ProjectionRunner.positionKey(projection.name) }
}

/// Applies commits to a projection, moving its position in the same transaction.
enum ProjectionRunner {
  /// Events a commit may apply to one inline projection that fell behind (a rebuild under
  /// way, commits of a process that had not registered it): past this, the projection
  /// catches up over the next commits instead of making one commit huge.
  static let inlineCatchUpEvents = 100_000

  static func positionKey(_ name: String) -> String { "projection:" + name }

  static func databaseName(_ name: String, version: Int) -> String {
    StoreDatabases.name("projection.\(name)", version: version)
  }

  /// Applies the commits after the projection's position, oldest first, until the end of
  /// the log or until about `maxEvents` events were applied.
  ///
  /// - Returns: what was applied, and whether the projection reached the end of the log.
  @discardableResult
  static func catchUp(_ p: OpenProjection, in txn: WriteHandle, dbs: StoreDatabases, model: Model, maxEvents: Int)
    throws -> (commits: Int, events: Int, atEnd: Bool)
  {
    let reader = GraphReader(txn: txn, dbs: dbs, model: model)
    let storage = ProjectionStorage(txn: txn, db: p.db, dbs: dbs, model: model)
    var position = try StoreService.position(p.positionKey, in: p.consumers, txn)
    var commits = 0
    var events = 0
    while events < maxEvents {
      // Decoded before any write, so no pointer into the map outlives a write.
      let batch = try reader.commits(after: position, maxCommits: 1_000, maxEvents: min(50_000, maxEvents - events))
      if batch.isEmpty { break }
      for c in batch {
        try p.projection.apply(c, to: storage)
        position = c.lastSequence
        commits += 1
        events += c.events.count
      }
    }
    if commits > 0 { try txn.put(p.consumers, key: p.positionKey, value: BigEndianKey(position)) }
    let atEnd = try reader.logEnd().sequence <= position
    return (commits, events, atEnd)
  }
}

/// The projections maintained inline with every commit of this process.
final class ProjectionRegistry: Sendable {
  private let registered = Locked<[OpenProjection]>([])

  func add(_ p: OpenProjection) throws {
    try registered.withLock { list in
      guard !list.contains(where: { $0.projection.name == p.projection.name }) else {
        throw ServiceError.projectionAlreadyRegistered(p.projection.name)
      }
      list.append(p)
    }
  }

  var names: [String] { registered.withLock { $0.map(\.projection.name) } }

  /// Brings every registered projection up to the commit just appended in `batch`: the
  /// commit itself when the projection was current before it and `tx` made it, else the
  /// log from its position (bounded by ``ProjectionRunner/inlineCatchUpEvents``).
  func applyInline(after info: CommitInfo, of tx: Transaction?, in batch: CommitBatch) throws {
    let list = registered.withLock { $0 }
    guard !list.isEmpty else { return }
    let txn = batch.handle
    let commit = tx.map {
      Commit(
        number: info.number, firstSequence: info.firstSequence, time: info.time, modelVersion: $0.model.version,
        metadata: $0.metadata, events: $0.events)
    }
    for p in list {
      let position = try StoreService.position(p.positionKey, in: p.consumers, txn)
      if position >= info.lastSequence { continue }
      if let commit, position + 1 == info.firstSequence {
        try p.projection.apply(commit, to: ProjectionStorage(txn: txn, db: p.db, dbs: batch.dbs, model: batch.model))
        try txn.put(p.consumers, key: p.positionKey, value: BigEndianKey(info.lastSequence))
      } else {
        try ProjectionRunner.catchUp(
          p, in: txn, dbs: batch.dbs, model: batch.model, maxEvents: ProjectionRunner.inlineCatchUpEvents)
      }
    }
  }
}
