import Foundation
internal import LMDB

/// Rebuilding projections by replaying the log, the law every projection obeys:
/// replaying the log from the start gives exactly the stored projection.
enum Replay {
  /// Events per LMDB write transaction during a replay: LMDB can dirty about 2^17 pages
  /// in one transaction before it spills, so long logs are replayed in batches.
  ///
  /// A batch holds the objects it changed until it writes them, once each: 50,000 events
  /// replayed a million as fast as 250,000 did (2.2–2.6 million events/s against 1.6–2.4
  /// side by side) with 19 MiB of anonymous memory instead of 76.
  static let batchEvents = 50_000

  /// Applies one logged commit to a projection (everything but the log entry itself), each
  /// event as it is decoded.
  static func project(_ reader: inout CommitCodec.EventReader, _ projector: Projector) throws {
    projector.expect(events: reader.eventCount)
    if let base = reader.header.metadata.base {
      guard reader.header.firstSequence + UInt64(reader.eventCount) <= base.lastSequence + 1 else {
        throw StoreError.corrupt(
          "the base at \(reader.header.firstSequence) has events past its cut \(base.lastSequence + 1)")
      }
      // A base's lists take the order keys they had, its objects the versions (Docs/retention.md).
      projector.baseOrderKeys = base.orderKeys.makeIterator()
      while let e = try reader.next() { try projector.apply(e) }
      try projector.finishBase(base)
      return
    }
    while let e = try reader.next() { try projector.apply(e) }
    let commit = reader.header
    if let key = commit.metadata.idempotencyKey {
      try projector.dbs.record(key: key, firstSequence: commit.firstSequence, in: projector.txn)
    }
    try projector.recordHistory(commitSequence: commit.firstSequence)
  }

  /// Checks a log entry's place in the log: its key, number and sequence follow the previous.
  static func checkOrder(_ c: Commit, key: UInt64, previous: (commit: UInt64, sequence: UInt64)) throws {
    guard c.firstSequence == key else {
      throw StoreError.corrupt("log entry \(key) holds a commit starting at sequence \(c.firstSequence)")
    }
    if let base = c.metadata.base {
      // The base of a truncated log comes first and stands for every commit up to its own.
      guard previous == (0, 0) else {
        throw StoreError.corrupt("log entry \(key): a base after commit \(previous.commit); a base starts its log")
      }
      guard c.number >= 1, c.firstSequence >= 1, base.lastSequence >= c.firstSequence else {
        throw StoreError.corrupt("log entry \(key): a base of commit \(c.number) ending at \(base.lastSequence)")
      }
      return
    }
    guard c.number == previous.commit + 1, c.firstSequence == previous.sequence + 1 else {
      throw StoreError.corrupt(
        "log entry \(key): commit \(c.number) at sequence \(c.firstSequence) does not follow commit \(previous.commit) ending at \(previous.sequence)"
      )
    }
  }

  /// Replays the log of `writer`'s databases into their projections, reading it through
  /// the same write transactions (a rebuild, a format upgrade).
  static func rebuild(_ writer: CommitWriter, progress: (Int) -> Void = { _ in }) throws -> (commits: Int, events: Int)
  {
    let log = writer.dbs.log
    return try run(
      into: writer,
      readLog: { txn, from, visit in
        try txn.forEach(log, from: StoreKey.sequence(from)) { k, v in try visit(KeyField.u64(k, at: 0) ?? 0, v) }
      }, progress: progress)
  }

  /// Replays a log (read through `readLog`) into the projections of `writer`'s databases,
  /// batch by batch, starting from empty projections.
  ///
  /// - Parameters:
  ///   - readLog: visits log entries from a sequence, in order, until the visitor says stop;
  ///     for a rebuild it reads through the same write transaction.
  ///   - progress: called after each batch with the events replayed so far.
  static func run(
    into writer: CommitWriter,
    readLog: (WriteHandle, UInt64, (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws -> Void,
    progress: (Int) -> Void = { _ in }
  ) throws -> (commits: Int, events: Int) {
    var previous = LogEnd(commit: 0, sequence: 0)
    var commits = 0
    var events = 0
    var first = true
    while true {
      let (end, batchCommits, batchEvents, done) = try writer.run { batch, _ in
        var batchCommits = 0
        var batchEvents = 0
        var end = previous
        var done = true
        let projector = Projector(txn: batch.handle, dbs: batch.dbs, model: batch.model)
        if first {
          for (_, db) in batch.dbs.projections { try batch.handle.empty(db) }
          // Marks the projections as incomplete until the last batch lands.
          try batch.handle.put(batch.dbs.meta, key: MetaKey.rebuilding, value: "1")
        }
        try readLog(batch.handle, previous.sequence + 1) { key, bytes in
          var reader = try CommitCodec.EventReader(bytes, context: "log entry \(key)")
          try checkOrder(reader.header, key: key, previous: (end.commit, end.sequence))
          try project(&reader, projector)
          end = LogEnd(commit: reader.header.number, sequence: reader.lastSequence)
          batchCommits += 1
          batchEvents += reader.eventCount
          if batchEvents >= Self.batchEvents {
            done = false
            return false
          }
          return true
        }
        try projector.writeObjects()
        if done { try batch.handle.delete(batch.dbs.meta, key: MetaKey.rebuilding) }
        return (end, batchCommits, batchEvents, done)
      }
      first = false
      previous = end
      commits += batchCommits
      events += batchEvents
      progress(events)
      if done { return (commits, events) }
    }
  }
}

/// Databases of one model version in a scratch environment of the temporary directory, for a
/// replay beside the store's own (`verify`, `truncate`); ``remove()`` deletes them.
struct ScratchStore {
  let path: String
  let env: Environment
  let dbs: StoreDatabases

  init(model: Model, mapSize: Int, purpose: String) throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent("eventgraph-\(purpose)-\(UUID().uuidString)")
      .path
    try StoreFiles.makePrivateDirectory(path, intermediate: true)
    do {
      env = try Environment(
        path: path, options: EnvironmentOptions(flags: [.noSync], mapSize: max(mapSize, 64 << 20), maxDatabases: 64))
      guard let dbs = try StoreDatabases.open(env, version: model.version, create: true) else {
        throw StoreError.corrupt("cannot create scratch databases in \(path)")
      }
      self.dbs = dbs
    } catch {
      try? FileManager.default.removeItem(atPath: path)
      throw error
    }
  }

  /// Removes the scratch directory (its environment stays usable to open transactions).
  func remove() { try? FileManager.default.removeItem(atPath: path) }
}
