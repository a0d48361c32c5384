internal import EventGraphText
import Foundation
internal import LMDB

// Truncation: the commits before a cut folded into one base commit that holds the object
// graph as they left it (Docs/retention.md). The state at the cut is not the projection's
// (that is the state now): the commits before the cut are replayed into scratch databases,
// the same replay `verify` makes, and the base is read from them. Then one write
// transaction replaces those commits by the base, removes the history entries before the
// cut (but the one that is each live object's version) and the idempotency keys of the
// commits that go. Every other projection stays as it is, byte for byte: a replay of the
// base and the commits after it gives exactly them, which `verify` proves.

/// Where a truncation cuts a log: the commits before the cut are folded into a base.
public enum TruncationCut: Sendable, Hashable {
  /// Before the commit that starts at `sequence`: that commit and every later one are kept.
  case before(sequence: UInt64)
  /// Before the first commit made less than `seconds` ago (by the commits' own times).
  case olderThan(seconds: Double)
  /// Before the last `commits` commits; 0 folds every commit into the base.
  case keepCommits(Int)
}

/// What a truncation did, or, for a dry run, would do.
public struct TruncationReport: Sendable, Hashable {
  /// The first sequence kept: the first commit after the base starts there.
  ///
  /// It is the end of the log plus one when every commit was folded, 0 when there was
  /// nothing to fold.
  public var cut: UInt64 = 0
  /// The log entries folded into the base (an earlier base counts as one) and their events.
  public var commits = 0
  public var events = 0
  /// The base's events and the objects alive at the cut that it holds.
  public var baseEvents = 0
  public var objects = 0
  /// The history entries removed, and the objects whose history they shortened.
  public var historyEntries = 0
  public var objectsShortened = 0
  /// The idempotency keys forgotten with their commits.
  public var idempotencyKeys = 0
  /// About how many bytes of entries went, less the base's (LMDB's page overhead aside).
  ///
  /// That is room that later commits reuse; the file itself shrinks only when compacted.
  public var bytesFreed = 0
  /// Whether nothing was written (a dry run).
  public var dryRun = false
  /// The time taken, in seconds.
  public var seconds = 0.0

  /// Whether there was nothing before the cut to fold.
  public var isEmpty: Bool { commits == 0 }
}

extension EventStore {
  /// Folds the commits before `cut` into one base commit that holds the object graph as
  /// they left it: same identities, values, relationships and order, same object versions;
  /// every later commit keeps its number, sequences and bytes (Docs/retention.md).
  ///
  /// History before the cut goes: reads as of an earlier state, and readers positioned
  /// before it, get ``ErrorCode/historyTruncated``. The pages freed are reused by later
  /// commits; ``compact(at:dropVersionsBefore:droppingRollbackVersion:)`` gives them back
  /// to the file system. One write transaction does it: killed at any moment, the store is
  /// as it was or truncated, whole.
  ///
  /// - Parameters:
  ///   - cut: where the log is cut: the first commit kept.
  ///   - dryRun: work out what would go (the same replay), and write nothing.
  ///   - now: the time a cut by age is measured from, and the base's time of truncation.
  /// - Returns: what went; an empty report (``TruncationReport/isEmpty``) when the cut
  ///   leaves nothing to fold.
  /// - Throws: ``ErrorCode/invalidTruncation`` for a cut at 0, past the log's end, inside a
  ///   commit or before an earlier base, and while an upcast builds from the log;
  ///   ``ErrorCode/readOnly``; ``ErrorCode/replica``. Nothing is written then.
  @discardableResult
  public func truncate(_ cut: TruncationCut, dryRun: Bool = false, now: Date = Date()) throws -> TruncationReport {
    if options.readOnly && !dryRun { throw StoreError.readOnly(path: path) }
    return try Self.truncate(commits, cut, dryRun: dryRun, now: now)
  }

  /// ``truncate(_:dryRun:now:)`` through `commits`, the writer of the store's log (the
  /// retention scheduler has no store, only its writer).
  ///
  /// With `replicating`, the truncation folds a replica's log of `replicating.version` the
  /// way its primary folded its own: the base made must be `replicating.base` byte for
  /// byte, the replica's refusal of local writes does not apply, and the checkpoint lands
  /// with it.
  static func truncate(
    _ commits: CommitWriter, _ cut: TruncationCut, dryRun: Bool, now: Date, replicating: ReplicatedBase? = nil
  ) throws -> TruncationReport {
    let (env, path) = (commits.env, commits.path)
    let (dbs, model) = replicating.map { ($0.dbs, $0.model) } ?? (commits.dbs, commits.model)
    let started = ContinuousClock.now
    if VersionBuild.builderRuns(path) {
      throw StoreError.invalidTruncation(
        path: path, cut: nil, "an upcast is building a version from its log; let it finish or stop it first")
    }
    var report = TruncationReport()
    report.dryRun = dryRun
    // Short read transactions only: a reader held through the replay would keep every page
    // the commits meanwhile free from being reused, and the file would grow by each of them.
    let planned = try StoreError.reportingStorage(path: path) {
      try env.readHandle { txn in
        try TruncationPlan(cut, now: now, path: path, GraphReader(txn: txn, dbs: dbs, model: model))
      }
    }
    guard let plan = planned else {
      report.seconds = Self.seconds(since: started)
      return report
    }
    let base = try plan.makeBase(env: env, dbs: dbs, model: model, path: path, truncatedAt: now)
    if let replicating, base.record != replicating.base.bytes {
      throw ReplicatedBase.diverged(replicating.base, version: model.version, cut: plan.cut)
    }
    report.cut = plan.cut
    report.commits = plan.entries
    report.events = plan.events
    report.baseEvents = base.events
    report.objects = base.objects
    let removals: TruncationPlan.Removals
    if dryRun {
      removals = try StoreError.reportingStorage(path: path) {
        try env.readHandle { txn in try plan.removals(txn, dbs: dbs, base: base) }
      }
    } else {
      removals = try commits.run { batch, _ in
        if let replicating {
          try batch.checkNoRebuild()
          if let c = replicating.checkpoint { try batch.setCheckpoint(c) }
        } else {
          try batch.checkWritable()
        }
        let txn = batch.handle
        try plan.checkUnchanged(GraphReader(txn: txn, dbs: dbs, model: model), path: path)
        let removals = try plan.removals(txn, dbs: dbs, base: base, removing: true)
        try txn.put(dbs.log, key: StoreKey.sequence(plan.firstKey), value: base.record)
        return removals
      }
    }
    report.historyEntries = removals.history
    report.objectsShortened = removals.objects
    report.idempotencyKeys = removals.keys
    report.bytesFreed = max(0, plan.bytes + removals.bytes - base.record.count - 8)
    report.seconds = Self.seconds(since: started)
    return report
  }
}

/// A cut worked out against one snapshot of the log: where it falls and what lies before it.
struct TruncationPlan {
  /// The first sequence kept.
  let cut: UInt64
  /// The log's first key (where the base goes) and the number of the entry there.
  let firstKey: UInt64
  let firstNumber: UInt64
  /// The last commit before the cut: the base takes its number and time.
  let lastNumber: UInt64
  let lastTime: Date
  /// The log entries before the cut, their events and bytes (keys included).
  let entries: Int
  let events: Int
  let bytes: Int

  /// The plan of `cut`; `nil` when it leaves nothing to fold.
  init?(_ asked: TruncationCut, now: Date, path: String, _ reader: GraphReader<ReadHandle>) throws {
    func refuse(_ at: UInt64?, _ problem: String) -> StoreError {
      StoreError.invalidTruncation(path: path, cut: at, problem)
    }
    if let building = try Self.unfinishedUpcast(reader) {
      throw refuse(
        nil,
        "an upcast to model version \(building) reads from its log and is not finished; finish it (or drop the version) first"
      )
    }
    let end = try reader.logEnd()
    let logBase = try reader.logBase()
    let earliest = logBase?.cut ?? 1
    // The cut; for one by age, found by the walk below that counts what lies before it.
    var s: UInt64? = nil
    var threshold: Date? = nil
    switch asked {
    case .before(let sequence):
      guard sequence >= 1 else { throw refuse(sequence, "sequences start at 1") }
      guard sequence <= end.sequence + 1 else {
        throw refuse(sequence, "it lies beyond the end of the log (the last sequence is \(end.sequence))")
      }
      if let b = logBase, sequence < b.cut {
        throw refuse(
          sequence,
          "it lies before the base: history before sequence \(b.base.lastSequence) was truncated on \(ISO8601.format(b.base.truncatedAt))"
        )
      }
      if sequence <= end.sequence {
        guard let c = try reader.commit(containing: sequence), c.firstSequence == sequence else {
          let c = try reader.commit(containing: sequence)
          throw refuse(
            sequence,
            "it lies inside commit \(c?.number ?? 0) (events \(c?.firstSequence ?? 0)...\(c?.lastSequence ?? 0)); a cut falls between commits"
          )
        }
      }
      s = sequence
    case .olderThan(let seconds):
      guard seconds.isFinite, seconds >= 0 else { throw refuse(nil, "an age of \(seconds) seconds is not one") }
      threshold = now.addingTimeInterval(-seconds)
    case .keepCommits(let n):
      guard n >= 0 else { throw refuse(nil, "a number of commits to keep must be 0 or more, not \(n)") }
      let after = end.commit - (logBase?.number ?? 0)
      if UInt64(n) >= after {
        s = earliest
      } else if n == 0 {
        s = end.sequence + 1
      } else {
        guard let first = try reader.firstSequence(ofCommit: end.commit - UInt64(n) + 1) else {
          throw StoreError.corrupt("the log has no commit \(end.commit - UInt64(n) + 1)")
        }
        s = first
      }
    }
    var first: (key: UInt64, number: UInt64)? = nil
    var last = (number: UInt64(0), time: Date(timeIntervalSince1970: 0))
    var entries = 0
    var events = 0
    var bytes = 0
    try reader.txn.forEach(reader.dbs.log) { k, v in
      let key = KeyField.u64(k, at: 0) ?? 0
      if let s, key >= s { return false }
      let h = try CommitCodec.decodeHeader(v, context: "log entry \(key)")
      // By age: the cut falls before the first commit after the base that is young enough.
      if let threshold, key >= earliest, h.time >= threshold {
        s = h.firstSequence
        return false
      }
      if first == nil { first = (key, h.number) }
      last = (h.number, h.time)
      entries += 1
      events += Int(h.eventCount)
      bytes += k.count + v.count
      return true
    }
    let found = s ?? end.sequence + 1
    guard found > earliest, let first else { return nil }
    cut = found
    (firstKey, firstNumber) = first
    (lastNumber, lastTime) = last
    (self.entries, self.events, self.bytes) = (entries, events, bytes)
  }

  /// The version an unfinished upcast builds from this log, when one does.
  static func unfinishedUpcast(_ reader: GraphReader<ReadHandle>) throws -> Int? {
    try EventStore.upcastCheckpoints(reader).first?.version
  }

  /// Refuses a write transaction that finds the log other than planned: another truncation
  /// came first, or the cut's commit is gone.
  func checkUnchanged(_ reader: GraphReader<WriteHandle>, path: String) throws {
    var same = false
    try reader.txn.forEach(reader.dbs.log) { k, v in
      let h = try CommitCodec.decodeHeader(v, context: "log entry \(KeyField.u64(k, at: 0) ?? 0)")
      same = KeyField.u64(k, at: 0) == firstKey && h.number == firstNumber
      return false
    }
    let end = try reader.logEnd().sequence
    if same && cut <= end { same = try reader.commit(containing: cut)?.firstSequence == cut }
    guard same else {
      throw StoreError.invalidTruncation(
        path: path, cut: cut, "the log's start changed while the truncation worked (another truncation?); run it again")
    }
  }

  // MARK: - The base

  /// A base commit made, and what it holds.
  struct Base {
    let record: [UInt8]
    let events: Int
    let objects: Int
    let versions: [ObjectID: UInt64]
  }

  /// Replays the commits before the cut into scratch databases and reads the base from them.
  func makeBase(env: Environment, dbs: StoreDatabases, model: Model, path: String, truncatedAt: Date) throws -> Base {
    let scratch = try ScratchStore(model: model, mapSize: env.info.mapSize, purpose: "truncate")
    defer { scratch.remove() }
    let cut = cut
    let log = dbs.log
    _ = try Replay.run(
      into: CommitWriter(env: scratch.env, dbs: scratch.dbs, model: model, path: scratch.path),
      readLog: { _, from, visit in
        // Read transactions of a few hundred commits each: a reader held through the replay
        // would keep the pages that commits free meanwhile from being reused, and the file
        // would grow by all of them. The commits before the cut do not change (a truncation
        // that came first is found by the write transaction's check).
        var next = from
        var reading = true
        while reading {
          reading = false
          var read = 0
          try env.readHandle { source in
            try source.forEach(log, from: StoreKey.sequence(next)) { k, v in
              let key = KeyField.u64(k, at: 0) ?? 0
              guard key < cut, try visit(key, v) else { return false }
              next = key + 1
              read += 1
              if read == 256 { reading = true }
              return read < 256
            }
          }
        }
      })
    return try StoreError.reportingStorage(path: path) {
      try scratch.env.readHandle { txn in
        try makeBase(GraphReader(txn: txn, dbs: scratch.dbs, model: model), truncatedAt)
      }
    }
  }

  /// The base of the state `reader` holds: every live object inserted and set in identity
  /// order, then every relationship linked once (from its ordered side, else from the lower
  /// identity), each list's members in its order, with their order keys.
  private func makeBase(_ reader: GraphReader<ReadHandle>, _ truncatedAt: Date) throws -> Base {
    let model = reader.model
    var identities: [(ObjectID, EntityID)] = []
    try reader.txn.forEach(reader.dbs.identities) { k, v in
      guard let o = KeyField.u64(k, at: 0), let e = KeyField.u16(v, at: 0) else {
        throw StoreError.corrupt("identities: an entry of \(k.count) bytes")
      }
      identities.append((ObjectID(o), EntityID(rawValue: e)))
      return true
    }
    var body = CommitCodec.EventBody(capacity: 64 * identities.count + 64)
    var live: [ObjectID: EntityID] = [:]
    var deleted: [ObjectID: EntityID] = [:]
    var versions: [ObjectID: UInt64] = [:]
    try reader.txn.withCursor(reader.dbs.history) { history in
      for (o, e) in identities {
        guard let state = try reader.object(o) else {
          deleted[o] = e
          continue
        }
        live[o] = e
        versions[o] = try reader.version(of: o, history)
        body.append(.insert(o, entity: e))
        for (i, v) in state.values.enumerated() {
          if let v { body.append(.set(o, attribute: PropertyID(rawValue: UInt16(i)), value: v)) }
        }
      }
    }
    var orderKeys: [UInt64] = []
    func relationship(_ e: EntityID?, _ id: PropertyID) throws -> Relationship {
      guard let e, case .relationship(let r)? = model.entity(e)?.property(id)?.kind else {
        throw StoreError.corrupt("links: no relationship \(id.rawValue) of entity \(e?.rawValue ?? 0)")
      }
      return r
    }
    try reader.txn.forEach(reader.dbs.links) { k, v in
      guard let raw = KeyField.u64(k, at: 0), let slot = LinkEntry.slot(k), let t = LinkEntry.target(key: k, value: v)
      else { throw StoreError.corrupt("links: an entry of \(k.count) bytes") }
      if slot.isReverse { return true }
      let o = ObjectID(raw)
      let r = try relationship(live[o], slot.relationship)
      var inverse: Relationship? = nil
      if let inv = r.inverse {
        // Both sides are stored; the link is made once: from the ordered side, so that
        // appends in key order make its list (a reader of the events alone, a history
        // snapshot, sees the order), else from the lower identity.
        let other = try relationship(live[t], inv)
        let fromHere =
          r.isOrdered != other.isOrdered ? r.isOrdered : (o < t || (o == t && r.id.rawValue <= inv.rawValue))
        if !fromHere { return true }
        inverse = other
      }
      body.append(.link(o, relationship: r.id, target: t, position: nil))
      if r.isOrdered, let key = LinkEntry.last(k) { orderKeys.append(key) }
      if let inverse, inverse.isOrdered {
        guard let key = try reader.orderKey(t, LinkSlot(inverse.id), of: o) else {
          throw StoreError.corrupt("links: \(reader.display(t)).\(inverse.name) lacks \(reader.display(o))")
        }
        orderKeys.append(key)
      }
      return true
    }
    // Each event of the base stands for a different one before the cut (an object's insert,
    // the last set of each value, the link of each pair), so the base's numbers fit below it.
    guard UInt64(body.count) <= cut - firstKey else {
      throw StoreError.corrupt("the base of \(body.count) events does not fit below the cut at \(cut)")
    }
    let commit = Commit(
      number: lastNumber, firstSequence: firstKey, time: lastTime, modelVersion: model.version,
      metadata: CommitMetadata(
        base: HistoryBase(
          lastSequence: cut - 1, truncatedAt: truncatedAt, versions: versions, deleted: deleted,
          orderKeys: orderKeys)),
      events: [])
    return Base(
      record: CommitCodec.encode(commit, body: body), events: body.count, objects: live.count, versions: versions)
  }

  // MARK: - What goes from the projections

  /// What a truncation removes besides the log's entries.
  struct Removals {
    var history = 0
    var objects = 0
    var keys = 0
    var bytes = 0
  }

  /// Walks the history entries before the cut (each object's from its first, stopping at
  /// the cut) and the idempotency keys, counting what goes, and with `removing` removes it
  /// and the log's entries before the cut.
  func removals<T: TransactionReading>(_ txn: T, dbs: StoreDatabases, base: Base, removing: Bool = false) throws
    -> Removals
  {
    var r = Removals()
    try txn.withCursor(dbs.history) { cursor in
      var more = try cursor.first()
      var lastObject: UInt64? = nil
      while more {
        let (o, s) = try cursor.withCurrent { k, _ in (KeyField.u64(k, at: 0) ?? 0, KeyField.u64(k, at: 8) ?? 0) }
        if s >= cut {
          guard o < .max else { break }
          more = try cursor.seek(StoreKey.history(ObjectID(o + 1), 0))
          continue
        }
        guard base.versions[ObjectID(o)] != s else {
          more = try cursor.next()
          continue
        }
        r.history += 1
        r.bytes += 16 + 4
        if lastObject != o {
          r.objects += 1
          lastObject = o
        }
        if removing { try cursor.deleteCurrent() }
        // After a delete the cursor stands on the next entry already, and `next` moves
        // onto it (LMDB's `C_DEL`).
        more = try cursor.next()
      }
    }
    try txn.withCursor(dbs.dedupe) { cursor in
      var more = try cursor.first()
      while more {
        let (goes, size) = try cursor.withCurrent { k, v in ((KeyField.u64(v, at: 0) ?? 0) < cut, k.count + v.count + 4)
        }
        if goes {
          r.keys += 1
          r.bytes += size
          if removing { try cursor.deleteCurrent() }
        }
        more = try cursor.next()
      }
    }
    if removing {
      try txn.withCursor(dbs.log) { cursor in
        var more = try cursor.first()
        while more, try cursor.withCurrent({ k, _ in (KeyField.u64(k, at: 0) ?? .max) < cut }) {
          try cursor.deleteCurrent()
          more = try cursor.next()
        }
      }
    }
    return r
  }
}
