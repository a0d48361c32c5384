import Foundation
internal import LMDB

/// Commits' own LMDB writes, made directly through the LMDB module.
///
/// The floor under the benchmarks' durable-commit ratios (Docs/benchmarks.md); it lives
/// beside the store, whose layout it writes, and is not part of the public API.
///
/// A store commit that sets one attribute writes three keys: the commit record at the log's
/// end, the object's record, and the object's history entry. Written here without the
/// store's commit path (no `Transaction`, no validation, no projector, no writer thread),
/// into the store's own environment, they touch the same B-trees, pages and free list as
/// the store's commits do: the store's ratio against raw LMDB can come near this one's,
/// not pass it. Each is a real commit, setting the attribute to the value the object's
/// record already holds, so the store stays consistent and its own commits go on after.
package final class CommitFloor {
  private let store: EventStore
  private let attribute: PropertyID
  private let entity: EntityID
  private let value: Value
  /// The objects set in turn, with their records (which hold `value`).
  private let targets: [(id: ObjectID, record: [UInt8])]
  private var turn = 0

  /// Each of `targets` holds `value` in `attribute` (a commit of the store's set it).
  package init(store: EventStore, targets: [ObjectID], attribute: String, value: Value) throws {
    guard let e = store.model.entity(named: "Item"), let a = e.propertyID(named: attribute), !targets.isEmpty else {
      throw StoreError.corrupt("commit floor: no Item with attribute \(attribute)")
    }
    self.targets = try store.env.read { txn in
      try targets.map { o in
        guard let record = try txn.get(store.dbs.objects, key: StoreKey.object(o)) else {
          throw StoreError.corrupt("commit floor: no record for #\(o.rawValue)")
        }
        return (o, record)
      }
    }
    self.store = store
    self.attribute = a
    self.entity = e.id
    self.value = value
  }

  /// `n` commits, `perTransaction` to a durable transaction (the group commit's batch),
  /// each in a nested transaction of its own when `nested` (as the store's writer thread
  /// runs them, so that a refused commit is rolled back alone).
  package func commits(_ n: Int, perTransaction: Int = 1, nested: Bool = false) throws {
    let dbs = store.dbs
    try run(n, perTransaction: perTransaction) { txn, last in
      let (o, record) = targets[turn % targets.count]
      turn += 1
      let commit = next(after: last, [.set(o, attribute: attribute, value: value)])
      func write(_ w: borrowing WriteTransaction) throws {
        try w.put(
          dbs.log, key: StoreKey.sequence(commit.firstSequence), value: CommitCodec.encode(commit), flags: .append)
        try w.put(dbs.objects, key: StoreKey.object(o), value: record)
        try w.put(dbs.history, key: StoreKey.history(o, commit.firstSequence), value: [UInt8]())
      }
      if nested { try txn.nested { try write($0) } } else { try write(txn) }
      return commit
    }
  }

  /// `n` commits that each insert an object holding `value` in `attribute`.
  ///
  /// Two events, as the service benchmark's inserts: the five keys such a commit writes
  /// (the commit record, the new object's record — a copy of the first target's, since
  /// records hold no identity — its identity, its entry among its entity's objects and its
  /// history entry), all at the ends of their databases, `perTransaction` commits to a
  /// durable transaction. The objects are real: the store reads them back as inserted.
  package func insertCommits(_ n: Int, perTransaction: Int) throws {
    let dbs = store.dbs
    let record = targets[0].record
    var nextObject: UInt64?
    try run(n, perTransaction: perTransaction) { txn, last in
      // The identity after the last one given, read once: the floor is the only writer.
      let o = ObjectID(try nextObject ?? lastIdentity(txn) + 1)
      nextObject = o.rawValue + 1
      let commit = next(after: last, [.insert(o, entity: entity), .set(o, attribute: attribute, value: value)])
      try txn.put(
        dbs.log, key: StoreKey.sequence(commit.firstSequence), value: CommitCodec.encode(commit), flags: .append)
      try txn.put(dbs.objects, key: StoreKey.object(o), value: record, flags: .append)
      try txn.put(dbs.identities, key: StoreKey.object(o), value: StoreKey.entityPrefix(entity), flags: .append)
      try txn.put(dbs.entities, key: StoreKey.entity(entity, o), value: [UInt8](), flags: .append)
      try txn.put(dbs.history, key: StoreKey.history(o, commit.firstSequence), value: [UInt8](), flags: .append)
      return commit
    }
  }

  /// `n` commits, `perTransaction` to a durable transaction: `write` makes each in the
  /// transaction, given the commit before it, and returns it.
  private func run(
    _ n: Int, perTransaction: Int, _ write: (borrowing WriteTransaction, Commit) throws -> Commit
  ) throws {
    var done = 0
    while done < n {
      let count = min(perTransaction, n - done)
      try store.env.write { txn in
        try txn.withCursor(store.dbs.log) { c in
          guard try c.last() else { throw StoreError.corrupt("commit floor: the log is empty") }
          var last = try c.withCurrent { _, v in try CommitCodec.decode(v, context: "the log's last commit") }
          for _ in 0..<count { last = try write(txn, last) }
        }
      }
      done += count
    }
  }

  /// The highest identity given so far.
  private func lastIdentity(_ txn: borrowing WriteTransaction) throws -> UInt64 {
    return try txn.withCursor(store.dbs.identities) { ids in
      guard try ids.last() else { throw StoreError.corrupt("commit floor: no identities") }
      return try ids.withCurrent { k, _ in KeyField.u64(k, at: 0) ?? 0 }
    }
  }

  /// The commit after `last`, of `events`.
  private func next(after last: Commit, _ events: [Event]) -> Commit {
    Commit(
      number: last.number + 1, firstSequence: last.lastSequence + 1, time: Date(), modelVersion: store.model.version,
      events: events)
  }
}
